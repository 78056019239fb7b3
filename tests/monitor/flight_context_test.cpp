// The flight recorder's context trigger (flight_context_model): a model
// saved from a training run of one program (two calling contexts of one
// operation, one fast, one slow) makes a later run snapshot the execution
// that is slow for its own context, and not the equally slow executions
// that are normal for theirs. A model that cannot be used turns monitoring
// off with the reason.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "analysis/context/context_baseline.hpp"
#include "analysis/context/context_log.hpp"
#include "format/log_reader.hpp"
#include "format/native_reader.hpp"
#include "run_helpers.hpp"

namespace sonde::test {
namespace {

constexpr const char* kFastMs = "2";
constexpr const char* kSlowMs = "50";

// Trains a model the way `sonde context LOG --save-model FILE` does.
std::string train_model(const std::string& name) {
  const std::string out = fresh_dir(name);
  RunResult r = run_program({kPrograms + "/test_flight", "context-train", "40", kFastMs, kSlowMs},
                            env_for(out));
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  const std::vector<std::string> logs = files_with_suffix(out, ".sonde");
  EXPECT_EQ(logs.size(), 1u);
  if (logs.size() != 1) return "";
  const analysis::ContextLog log = analysis::read_context_log(logs[0]);
  EXPECT_TRUE(log.read.ok);
  EXPECT_EQ(log.data.traces, 80u);
  const analysis::ContextIndex index(log.data);
  analysis::ContextTree tree(log.data, index);
  const analysis::ContextTreeOptions options;
  tree.apply_operators(options);
  const std::string model = out + "/model.json";
  std::ofstream file(model);
  analysis::write_baseline(file, analysis::make_baseline(log.data, index, tree, options, logs[0]));
  return model;
}

struct FlightRun {
  RunResult result;
  std::vector<std::string> snapshots;
  std::vector<std::string> reasons;
};

class ReasonReader : public format::NativeVisitor {
 public:
  void on_meta(std::string_view key, std::string_view value) override {
    if (key == "snapshot.reason") reason = std::string(value);
  }
  std::string reason;
};

FlightRun run_with_model(const std::string& name, const std::string& model, bool plant,
                         const std::string& min_excess_us = "1000") {
  const std::string out = fresh_dir(name);
  FlightRun run;
  // Score 40, not 3 or 10: the slow context's 50-ms sleeps must not reach
  // it on a loaded machine under a sanitizer (its fence is then at least
  // 50 + 40 x 5 % of 50 = 150 ms; at score 10 with 25-ms sleeps, one sleep
  // of 46 ms in CI's TSan build crossed a fence of 38 ms). The planted
  // 50-ms execution in the 2-ms context stays far above its own fence
  // (2 + 40 x max(IQR, 0.1 ms), under 25 ms unless 2-ms sleeps spread by
  // more than half a millisecond).
  run.result = run_program(
      {kPrograms + "/test_flight", "context", "20", kFastMs, kSlowMs, plant ? "1" : "0"},
      env_for(out, {"SONDE_FLIGHT=on", "SONDE_SUMMARY=true", "SONDE_FLIGHT_CONTEXT_MODEL=" + model,
                    "SONDE_FLIGHT_CONTEXT_SCORE=40",
                    "SONDE_FLIGHT_CONTEXT_MIN_EXCESS_US=" + min_excess_us,
                    "SONDE_FLIGHT_MIN_INTERVAL_MS=0", "SONDE_FLIGHT_WINDOW_MS=60000"}));
  for (const std::string& f : files_with_suffix(out, ".sonde")) {
    run.snapshots.push_back(f);
    ReasonReader meta;
    EXPECT_TRUE(format::read_native_file(f, meta).ok) << f;
    run.reasons.push_back(meta.reason);
  }
  return run;
}

// "N traces scored, M above flight_context_score; not scored: U ..."
std::vector<int> trigger_counts(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m,
                         std::regex(R"((\d+) traces scored, (\d+) above flight_context_score; )"
                                    R"(not scored: (\d+) with a context the model never saw)"))) {
    return {};
  }
  return {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
}

TEST(FlightContextTrigger, AnExecutionSlowForItsContextIsSnapshotted) {
  const std::string model = train_model("flight_context_train");
  ASSERT_FALSE(model.empty());
  const FlightRun run = run_with_model("flight_context_planted", model, true);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  ASSERT_EQ(run.snapshots.size(), 1u) << run.result.stderr_text;
  // The planted execution, named with its context; not a path.slow one.
  const std::string& reason = run.reasons[0];
  EXPECT_NE(reason.find("far outside its calling context"), std::string::npos) << reason;
  EXPECT_NE(reason.find("path.fast"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("path.slow"), std::string::npos) << reason;
  // Every reader says why the snapshot was taken (`sonde summary` prints it).
  struct Discard final : format::RecordSink {
    bool on_record(const format::Record&) override { return true; }
  } discard;
  EXPECT_EQ(format::read_log(run.snapshots[0], discard).snapshot_reasons,
            std::vector<std::string>{reason});
  // 20 normal slow traces and the planted one, every context known.
  EXPECT_EQ(trigger_counts(run.result.stderr_text), (std::vector<int>{21, 1, 0}))
      << run.result.stderr_text;
}

TEST(FlightContextTrigger, EquallySlowExecutionsOfASlowContextTriggerNothing) {
  const std::string model = train_model("flight_context_train_control");
  ASSERT_FALSE(model.empty());
  const FlightRun run = run_with_model("flight_context_control", model, false);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  EXPECT_TRUE(run.snapshots.empty()) << (run.reasons.empty() ? "" : run.reasons[0]);
  EXPECT_EQ(trigger_counts(run.result.stderr_text), (std::vector<int>{20, 0, 0}))
      << run.result.stderr_text;
}

TEST(FlightContextTrigger, AnExcessBelowTheFloorTriggersNothing) {
  // The planted execution is about 48 ms above its context's third
  // quartile (50 ms against 2 ms): far out by its score, but under a floor
  // of 100 ms.
  const std::string model = train_model("flight_context_train_floor");
  ASSERT_FALSE(model.empty());
  const FlightRun run = run_with_model("flight_context_floor", model, true, "100000");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  EXPECT_TRUE(run.snapshots.empty()) << (run.reasons.empty() ? "" : run.reasons[0]);
  EXPECT_EQ(trigger_counts(run.result.stderr_text), (std::vector<int>{21, 0, 0}))
      << run.result.stderr_text;
}

TEST(FlightContextTrigger, ATraceTooLargeToFollowIsCountedAndTheNextIsScored) {
  const std::string model = train_model("flight_context_train_wide");
  ASSERT_FALSE(model.empty());
  const std::string out = fresh_dir("flight_context_wide");
  // 70,000 calls in one trace: over the trigger's 65,536 per trace.
  RunResult r = run_program(
      {kPrograms + "/test_flight", "context-wide", "70000", kSlowMs},
      env_for(out, {"SONDE_FLIGHT=on", "SONDE_SUMMARY=true", "SONDE_FLIGHT_CONTEXT_MODEL=" + model,
                    "SONDE_FLIGHT_CONTEXT_SCORE=40"}));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(trigger_counts(r.stderr_text), (std::vector<int>{1, 0, 0})) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("0 with a context the model never saw, 1 too large, 0 that lost"),
            std::string::npos)
      << r.stderr_text;
  EXPECT_TRUE(files_with_suffix(out, ".sonde").empty()) << "nothing triggered";
}

TEST(FlightContextTrigger, AModelThatCannotBeUsedTurnsMonitoringOffWithTheReason) {
  const std::string out = fresh_dir("flight_context_bad");
  const std::string not_json = out + "/model.json";
  std::ofstream(not_json) << "{\"format\": \"something else\"}";
  for (const std::string& model : {out + "/missing.json", not_json}) {
    RunResult r =
        run_program({kPrograms + "/test_flight", "context", "2", kFastMs, "1", "1"},
                    env_for(out, {"SONDE_FLIGHT=on", "SONDE_FLIGHT_CONTEXT_MODEL=" + model}));
    EXPECT_EQ(r.exit_code, 0) << "the program runs on: " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("monitoring disabled: flight_context_model '" + model + "'"),
              std::string::npos)
        << r.stderr_text;
  }
  EXPECT_TRUE(files_with_suffix(out, ".sonde").empty());
  // Without flight = on the key is refused too.
  RunResult r = run_program({kPrograms + "/test_flight", "context", "2", kFastMs, "1", "0"},
                            env_for(out, {"SONDE_FLIGHT_CONTEXT_MODEL=" + not_json}));
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("flight_context_model needs flight = on"), std::string::npos)
      << r.stderr_text;
}

}  // namespace
}  // namespace sonde::test
