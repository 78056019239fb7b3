// The bind policy and the token of `sonde serve`, over real TCP, plus a
// guard on the UI's own code: it must never turn text into markup.
#include <gtest/gtest.h>

#include "http_get.hpp"
#include "serve/web_assets.hpp"
#include "serve_test_support.hpp"
#include "store/memory_store.hpp"

namespace sonde::serve::test {
namespace {

TEST(ServeBindPolicy, LoopbackNames) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.1.2.3"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("192.168.1.10"));
  EXPECT_FALSE(is_loopback_host("::"));
  EXPECT_FALSE(is_loopback_host("127.0.0.1.evil.example"));
  EXPECT_FALSE(is_loopback_host(""));
}

TEST(ServeBindPolicy, ParsesListen) {
  std::string host, error;
  int port = -1;
  ASSERT_TRUE(parse_listen("127.0.0.1:8080", &host, &port, &error)) << error;
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 8080);
  ASSERT_TRUE(parse_listen("[::1]:0", &host, &port, &error)) << error;
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 0);
  ASSERT_TRUE(parse_listen(":9000", &host, &port, &error)) << error;
  EXPECT_EQ(host, "127.0.0.1");
  for (const char* bad : {"8080", "host:", "host:99999", "host:-1", "host:80x"}) {
    EXPECT_FALSE(parse_listen(bad, &host, &port, &error)) << bad;
    EXPECT_NE(error.find("--listen"), std::string::npos) << bad;
  }
}

TEST(ServeBindPolicy, NonLoopbackWithoutTokenIsRefused) {
  store::MemoryStore store(bookstore_log());
  for (const char* host : {"0.0.0.0", "::"}) {
    ServeOptions o;
    o.host = host;
    o.port = 0;
    WebServer server(store, o);
    std::string error;
    EXPECT_FALSE(server.bind(&error)) << host;
    EXPECT_NE(error.find("--token"), std::string::npos) << error;
  }
}

TEST(ServeToken, EveryRequestMustCarryIt) {
  store::MemoryStore store(bookstore_log());
  ServeOptions o;
  o.host = "0.0.0.0";  // allowed because a token is set
  o.port = 0;
  o.token = "s3cret-token";
  RunningServer server(store, o);
  const int port = server.port();
  ASSERT_GT(port, 0);
  for (const char* target : {"/", "/app.js", "/api/info", "/api/traces"}) {
    EXPECT_EQ(http_get(port, target).status, 401) << target;
    EXPECT_EQ(http_get(port, target, "Authorization: Bearer wrong-token!\r\n").status, 401);
    EXPECT_EQ(http_get(port, target, "Authorization: Bearer s3cret-token\r\n").status, 200);
  }
  // The page is opened with ?token=; the cookie it gets covers the page's own requests.
  const HttpReply page = http_get(port, "/?token=s3cret-token");
  ASSERT_EQ(page.status, 200);
  const std::string cookie = page.header("set-cookie");
  EXPECT_NE(cookie.find("sonde_token=s3cret-token"), std::string::npos);
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_EQ(http_get(port, "/api/info", "Cookie: sonde_token=s3cret-token\r\n").status, 200);
  EXPECT_EQ(http_get(port, "/api/info", "Cookie: sonde_token=s3cret-tokem\r\n").status, 401);
  // The token parameter is not an API parameter, so it does not trip validation.
  EXPECT_EQ(http_get(port, "/api/traces?token=s3cret-token&limit=1").status, 200);
}

TEST(ServeAssets, UiCodeNeverParsesMarkup) {
  // The UI inserts trace strings as text (el() in app.js). Anything that
  // parses a string as HTML or code would undo that, so none may appear.
  bool saw_js = false;
  for (const EmbeddedFile& f : embedded_files()) {
    if (!f.name.ends_with(".js")) continue;
    saw_js = true;
    for (const char* sink : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                             "eval(", "new Function", "createContextualFragment"}) {
      EXPECT_EQ(f.data.find(sink), std::string_view::npos) << f.name << " uses " << sink;
    }
  }
  EXPECT_TRUE(saw_js);
  ASSERT_TRUE(find_asset("/").has_value());
  EXPECT_FALSE(find_asset("/../index.html").has_value());
  EXPECT_FALSE(find_asset("index.html").has_value());
}

}  // namespace
}  // namespace sonde::serve::test
