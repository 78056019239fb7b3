// Requests parsed from a connection's bytes (http_message.cpp).
#pragma once

#include <cstddef>
#include <string_view>

#include "tickets.hpp"

namespace tickets {

constexpr std::size_t kMaxHead = 16 * 1024;    // request line and headers
constexpr std::size_t kMaxBody = 1024 * 1024;  // Content-Length

enum class Parse { kRequest, kIncomplete, kBad, kTooLarge };

// The first request in `bytes`: kRequest fills `out` and `consumed`;
// kIncomplete asks for more bytes; kBad and kTooLarge end the connection
// with 400 and 413.
Parse parse_request(std::string_view bytes, Request& out, std::size_t& consumed);

}  // namespace tickets
