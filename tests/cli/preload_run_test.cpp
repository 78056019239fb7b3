// `sonde run` preloads libsonde-preload with libsonde: a program linked with
// libsonde alone (so without any interposer of its own) gets lock waits,
// SQL statements and exception causes under it, as it did when libsonde
// held the interposers (docs/probes.md, tests/monitor/preload_split_test.cpp).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "format/callable_schemas.hpp"
#include "format/diagnostic_schemas.hpp"
#include "format/log_reader.hpp"
#include "format/schema.hpp"
#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

struct PreloadRunLog {
  std::map<std::string, int> records;         // per record class
  std::map<std::string, std::string> causes;  // failed operation -> cause
};

class PreloadRunCollector final : public format::RecordSink {
 public:
  explicit PreloadRunCollector(PreloadRunLog& log) : log_(log) {}
  bool on_record(const format::Record& r) override {
    const std::string& cls = r.schema->class_name;
    ++log_.records[cls];
    if (cls == format::kieker_class::kAfterOperationFailed) {
      log_.causes[std::string(r.str(3))] = std::string(r.str(5));
    }
    return true;
  }

 private:
  PreloadRunLog& log_;
};

TEST_F(SondeCli, RunGivesALibsondeOnlyProgramLockWaitsQueriesAndExceptionCauses) {
  const std::string program =
      std::string(SONDE_BINARY_DIR) + "/tests/monitor/programs/test_split_libsonde";
  const fs::path out = dir_ / "logs";
  const CliRun r =
      sonde({"run", "--out", out.string(), "--set", "summary=false", "--set",
             "probe_lock_wait=true", "--set", "probe_database=true", "--", program, "work"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("work done"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("sonde: probe_"), std::string::npos) << r.err;
  fs::path log;
  for (const auto& entry : fs::directory_iterator(out)) {
    if (entry.path().extension() == ".sonde") log = entry.path();
  }
  ASSERT_FALSE(log.empty()) << r.err;
  PreloadRunLog contents;
  PreloadRunCollector collector(contents);
  ASSERT_TRUE(format::read_log(log.string(), collector).ok);
  EXPECT_EQ(contents.records[std::string(format::diagnostic_class::kLockWait)], 1);
  EXPECT_EQ(contents.records[std::string(format::callable_class::kDatabaseCall)], 1);
  const std::map<std::string, std::string> expected = {
      {"split.throw", "std::runtime_error: boom"},
      {"split.rethrow", "std::logic_error: again"},
      {"split.rethrow_exception", "std::runtime_error: from worker"}};
  EXPECT_EQ(contents.causes, expected);
}

}  // namespace
}  // namespace sonde::test
