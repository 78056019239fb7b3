// `sonde context --save-model` and `--baseline` end to end on generated
// Kieker logs of a small shop: every trace runs main(), which calls
// Stock.check() and Catalog.list(), and each of those calls Db.query(). The
// "slow" release makes only the query under Stock.check() 50 % slower; the
// "same" release draws new durations from the unchanged distributions.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "sonde_cli_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using sonde::test::CliRun;
using sonde::test::slurp;

constexpr int kShopTraces = 300;

// Deterministic durations: base ± 10 %, from a per-log seed.
class ShopJitter {
 public:
  explicit ShopJitter(uint64_t seed) : state_(seed * 2654435761u + 1) {}
  int64_t around(int64_t base) {
    state_ = state_ * 6364136223846793005u + 1442695040888963407u;
    const int64_t spread = base / 5;  // 20 % wide
    return base - spread / 2 + static_cast<int64_t>((state_ >> 33) % static_cast<uint64_t>(spread));
  }

 private:
  uint64_t state_;
};

void write_shop_log(const fs::path& dir, uint64_t seed, double slow_check_query) {
  fs::create_directories(dir);
  std::ofstream(dir / "kieker.map")
      << "$1=kieker.common.record.controlflow.OperationExecutionRecord\n";
  std::ofstream dat(dir / "kieker-20260101-000000000-UTC-001.dat");
  ShopJitter jitter(seed);
  int64_t clock = 1000000;
  for (int t = 0; t < kShopTraces; ++t) {
    const int64_t trace = 1000 + t;
    auto line = [&](const char* op, int64_t tin, int64_t tout, int eoi, int ess) {
      dat << "$1;" << tout << ";" << op << ";N/A;" << trace << ";" << tin << ";" << tout << ";shop;"
          << eoi << ";" << ess << "\n";
    };
    const int64_t main_in = clock;
    const int64_t check_in = main_in + jitter.around(50);
    const int64_t query1_in = check_in + jitter.around(100);
    const int64_t query1_out =
        query1_in +
        static_cast<int64_t>(static_cast<double>(jitter.around(10000)) * slow_check_query);
    const int64_t check_out = query1_out + jitter.around(2000);
    const int64_t list_in = check_out + jitter.around(50);
    const int64_t query2_in = list_in + jitter.around(100);
    const int64_t query2_out = query2_in + jitter.around(10000);
    const int64_t list_out = query2_out + jitter.around(3000);
    const int64_t main_out = list_out + jitter.around(50);
    line("app.Db.query()", query1_in, query1_out, 2, 2);
    line("app.Stock.check()", check_in, check_out, 1, 1);
    line("app.Db.query()", query2_in, query2_out, 4, 2);
    line("app.Catalog.list()", list_in, list_out, 3, 1);
    line("app.Main.main()", main_in, main_out, 0, 0);
    clock = main_out + 1000;
  }
}

class ContextRegressionCli : public sonde::test::SondeCli {
 protected:
  void SetUp() override {
    SondeCli::SetUp();
    write_shop_log(dir_ / "before", 1, 1.0);
    write_shop_log(dir_ / "same", 2, 1.0);
    write_shop_log(dir_ / "slow", 3, 1.5);
    model_ = (dir_ / "before.model.json").string();
    const CliRun save = sonde({"context", (dir_ / "before").string(), "--save-model", model_});
    EXPECT_EQ(save.exit_code, 0) << save.err;
  }

  // `sonde context LOG --baseline MODEL --fail-on-regression --json`.
  CliRun compare(const std::string& release) {
    return sonde({"context", (dir_ / release).string(), "--baseline", model_,
                  "--fail-on-regression", "--json"});
  }

  std::string model_;
};

TEST_F(ContextRegressionCli, SavedModelNamesItsSource) {
  const auto model = nlohmann::json::parse(slurp(model_));
  EXPECT_EQ(model["format"], "sonde-context-model/2");
  EXPECT_EQ(model["source"]["executions"], kShopTraces * 5);
  EXPECT_EQ(model["source"]["traces"], kShopTraces);
  EXPECT_EQ(model["operations"].size(), 4u);
}

TEST_F(ContextRegressionCli, SameReleaseChangesNothing) {
  const CliRun r = compare("same");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto reg = nlohmann::json::parse(r.out)["regression"];
  EXPECT_EQ(reg["executions"], kShopTraces * 5);
  EXPECT_EQ(reg["in_known_contexts"], kShopTraces * 5);
  EXPECT_EQ(reg["in_new_contexts"], 0);
  EXPECT_EQ(reg["context_counts"]["slower"], 0);
  EXPECT_EQ(reg["context_counts"]["faster"], 0);
  EXPECT_GT(reg["context_counts"]["unchanged"].get<int>(), 0);
  EXPECT_EQ(reg["operation_counts"]["slower"], 0);
}

TEST_F(ContextRegressionCli, SlowerQueryIsFoundInItsCallerContextOnly) {
  const CliRun r = compare("slow");
  ASSERT_EQ(r.exit_code, 3) << r.err << r.out;
  const auto reg = nlohmann::json::parse(r.out)["regression"];
  // The two queries behaved alike in the baseline, so the model keeps one
  // context for them; inclusive times make Stock.check() and main() slower
  // too. Catalog.list() did not change.
  for (const auto& c : reg["contexts"]) {
    if (c["verdict"] == "slower") {
      EXPECT_NE(c["operation"], "app.Catalog.list()") << c.dump();
    }
  }
  EXPECT_EQ(reg["context_counts"]["faster"], 0);
  // Inside the merged query context, each trace context is tested alone:
  // only the query under Stock.check() is slower, by about half.
  ASSERT_EQ(reg["leaves"].size(), 2u) << reg.dump(1);
  EXPECT_EQ(reg["leaf_counts"]["slower"], 1);
  for (const auto& c : reg["leaves"]) {
    const std::string context = c["context"];
    EXPECT_EQ(c["operation"], "app.Db.query()");
    EXPECT_EQ(c["n"], kShopTraces);
    if (context.find("Stock.check") != std::string::npos) {
      EXPECT_EQ(c["verdict"], "slower") << context;
      EXPECT_GT(c["change_percent"].get<double>(), 30.0);
      EXPECT_LT(c["p_adjusted"].get<double>(), 0.01);
    } else {
      EXPECT_NE(context.find("Catalog.list"), std::string::npos) << context;
      EXPECT_EQ(c["verdict"], "unchanged") << context;
    }
  }
}

TEST_F(ContextRegressionCli, TableNamesTheSlowerContext) {
  const CliRun r = sonde({"context", (dir_ / "slow").string(), "--baseline", model_});
  ASSERT_EQ(r.exit_code, 0) << r.err;  // no --fail-on-regression: a report, not a gate
  EXPECT_NE(r.out.find("Regression check against"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("slower"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("app.Stock.check() > app.Db.query()"), std::string::npos) << r.out;
}

TEST_F(ContextRegressionCli, BadBaselinesAndOptionsAreNamed) {
  const std::string missing = (dir_ / "no-such-model.json").string();
  CliRun r = sonde({"context", (dir_ / "same").string(), "--baseline", missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot use baseline '" + missing + "'"), std::string::npos) << r.err;

  const std::string broken = (dir_ / "broken.json").string();
  std::ofstream(broken) << "{\"format\": \"sonde-context-model/2\", \"references\": 7}";
  r = sonde({"context", (dir_ / "same").string(), "--baseline", broken});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(broken), std::string::npos) << r.err;

  // A trace log is not a model.
  r = sonde(
      {"context", (dir_ / "same").string(), "--baseline", (dir_ / "same" / "kieker.map").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("kieker.map"), std::string::npos) << r.err;

  r = sonde({"context", (dir_ / "same").string(), "--fail-on-regression"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--baseline"), std::string::npos) << r.err;
  r = sonde({"context", (dir_ / "same").string(), "--baseline", model_, "--alpha", "1.5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--alpha"), std::string::npos) << r.err;

  const std::string unwritable = (dir_ / "no-dir" / "m.json").string();
  r = sonde({"context", (dir_ / "same").string(), "--save-model", unwritable});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(unwritable), std::string::npos) << r.err;
}

}  // namespace
