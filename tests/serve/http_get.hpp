// The tests' HTTP client (tests/http_client.hpp), in the web API tests'
// namespace, with the URL encoding their query values need.
#pragma once

#include "http_client.hpp"
#include "store/url_encode.hpp"

namespace sonde::serve::test {

using sonde::test::connect_loopback;
using sonde::test::http_get;
using sonde::test::http_request;
using sonde::test::HttpReply;
using sonde::test::parse_http_reply;
using store::url_encode;  // for query values

}  // namespace sonde::serve::test
