// Percent-encoding for URL query values (ClickHouse's HTTP interface, and
// the tests' HTTP client for the web API).
#pragma once

#include <string>
#include <string_view>

namespace sonde::store {

// Percent-encodes everything but RFC 3986's unreserved characters.
std::string url_encode(std::string_view text);

}  // namespace sonde::store
