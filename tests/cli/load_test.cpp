// `sonde load` against the demo shop: the requests it reports are in
// requests.csv; bad targets and profiles are named.
#include <fstream>

#include "diagnose/engine/sut.hpp"
#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

class LoadCommand : public SondeCli {
 protected:
  // On another port when a parallel test's server took the first one.
  void start_shop() {
    for (int attempt = 1;; ++attempt) {
      port_ = diagnose::engine::free_loopback_port();
      shop_ = std::make_unique<diagnose::engine::SystemUnderTest>(
          std::vector<std::string>{(fs::path(SONDE_BINARY_DIR) / "examples" / "shop").string(),
                                   "--port", std::to_string(port_), "--products", "200"},
          (dir_ / "shop-output.txt").string());
      try {
        shop_->wait_ready("127.0.0.1", port_, 30);
        return;
      } catch (const diagnose::engine::PortTakenError&) {
        if (attempt == 3) throw;
      }
    }
  }
  fs::path profile(const std::string& profile_text) {
    const fs::path p = dir_ / "profile.json";
    std::ofstream(p) << profile_text;
    return p;
  }
  int port_ = 0;
  std::unique_ptr<diagnose::engine::SystemUnderTest> shop_;
};

TEST_F(LoadCommand, FixedRequestCountLandsInRequestsCsv) {
  start_shop();
  const auto p = profile(R"({"requests": [{"path": "/product?id={random:1:200}"}]})");
  const auto run =
      sonde({"load", "--target", "127.0.0.1:" + std::to_string(port_), "--profile", p.string(),
             "--users", "2", "--requests", "15", "--out", (dir_ / "r.csv").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("30 requests"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("0 errors"), std::string::npos) << run.out;
  std::ifstream in(dir_ / "r.csv");
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 31);
}

TEST_F(LoadCommand, UnreachableTargetFailsWithTheReason) {
  const auto p = profile(R"({"requests": [{"path": "/"}]})");
  const int port = diagnose::engine::free_loopback_port();
  const auto run = sonde({"load", "--target", "127.0.0.1:" + std::to_string(port), "--profile",
                          p.string(), "--requests", "2", "--out", (dir_ / "r.csv").string()});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("Connection refused"), std::string::npos) << run.err;
}

TEST_F(LoadCommand, BadProfileAndTargetAreNamed) {
  const auto p = profile(R"({"requests": [{"path": "/", "metod": "GET"}]})");
  auto run =
      sonde({"load", "--target", "127.0.0.1:8080", "--profile", p.string(), "--requests", "1"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("requests[0].metod"), std::string::npos) << run.err;
  run = sonde({"load", "--target", "localhost", "--profile", p.string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("HOST:PORT"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace sonde::test
