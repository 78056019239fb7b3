// `sonde convert` to the trace formats: every trace and execution of a real
// Kieker log arrives in OPEN.xtrace (read back by sonde), Chrome JSON and
// OTLP JSON Lines; a two-thread trace from the monitor comes out stitched;
// bad arguments and unwritable outputs get clear errors.
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

using nlohmann::json;

class SondeConvert : public SondeCli {
 protected:
  json summary(const std::string& log) {
    const CliRun r = sonde({"traces", log, "--summary", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  std::string bookstore() const { return (kKieker / "bookstore-oer-2010" / "log").string(); }
  // Executions = OperationExecutionRecords in the OER log.
  uint64_t bookstore_executions() {
    return summary(bookstore())["record_types"]
                               ["kieker.common.record.controlflow.OperationExecutionRecord"]
                                   .get<uint64_t>();
  }
};

TEST_F(SondeConvert, OpenXtraceKeepsEveryTraceAndExecution) {
  const std::string out = (dir_ / "bookstore.json").string();
  const CliRun r = sonde({"convert", bookstore(), out, "--to", "openxtrace"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json want = summary(bookstore());
  const json got = summary(out);
  EXPECT_EQ(got["traces"], want["traces"]);
  EXPECT_EQ(got["invalid_traces"].get<int>(), 0);
  // Each execution comes back as one before and one after event.
  EXPECT_EQ(got["record_types"]["kieker.common.record.flow.trace.operation.BeforeOperationEvent"]
                .get<uint64_t>(),
            bookstore_executions());
}

TEST_F(SondeConvert, ChromeHasOneCompleteEventPerExecution) {
  const std::string out = (dir_ / "bookstore.chrome.json").string();
  const CliRun r = sonde({"convert", bookstore(), "--out", out, "--to", "chrome"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out);
  const json doc = json::parse(in);
  uint64_t complete = 0;
  std::set<std::string> traces;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++complete;
    EXPECT_GE(e["dur"].get<double>(), 0);
    traces.insert(e["args"]["trace_id"].get<std::string>());
  }
  EXPECT_EQ(complete, bookstore_executions());
  EXPECT_EQ(traces.size(), summary(bookstore())["traces"].get<size_t>());
}

// protoc (Debian's protobuf-compiler) decodes the file against the schema
// subset in docs/formats: every field sonde writes has the type and number
// the schema gives it, or protoc fails.
TEST_F(SondeConvert, PerfettoDecodesWithProtocAndHasASlicePerExecution) {
  const std::string out = (dir_ / "bookstore.pftrace").string();
  const CliRun r = sonde({"convert", bookstore(), out, "--to", "perfetto"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("M records/s"), std::string::npos) << r.err;
  if (::system("command -v protoc >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "protoc is not installed (scripts/install-deps.sh installs protobuf-compiler)";
  }
  const fs::path docs = fs::path(SONDE_SOURCE_DIR) / "docs" / "formats";
  const fs::path text = dir_ / "bookstore.txt";
  const std::string command = "protoc --decode=perfetto.protos.Trace -I '" + docs.string() + "' '" +
                              (docs / "perfetto_subset.proto").string() + "' < '" + out + "' > '" +
                              text.string() + "' 2>&1";
  ASSERT_EQ(::system(command.c_str()), 0) << slurp(text);
  const std::string decoded = slurp(text);
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = decoded.find(needle); at != std::string::npos;
         at = decoded.find(needle, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("type: TYPE_SLICE_BEGIN"), bookstore_executions());
  EXPECT_EQ(count("type: TYPE_SLICE_END"), bookstore_executions());
  // A field the subset does not know is printed by number ("47: 0x...").
  std::istringstream lines(decoded);
  for (std::string line; std::getline(lines, line);) {
    const size_t start = line.find_first_not_of(' ');
    EXPECT_FALSE(start != std::string::npos &&
                 std::isdigit(static_cast<unsigned char>(line[start])))
        << "unknown field: " << line;
  }
  EXPECT_NE(decoded.find("process_name: \"SRV0\""), std::string::npos);
}

TEST_F(SondeConvert, OtlpLinesHoldEverySpanWithW3cIds) {
  const std::string out = (dir_ / "bookstore.otlp.jsonl").string();
  const CliRun r = sonde({"convert", bookstore(), out, "--to", "otlp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out);
  uint64_t spans = 0;
  std::set<std::string> trace_ids;
  for (std::string line; std::getline(in, line);) {
    const json request = json::parse(line);
    for (const json& rs : request["resourceSpans"]) {
      for (const json& ss : rs["scopeSpans"]) {
        for (const json& span : ss["spans"]) {
          ++spans;
          const std::string id = span["traceId"];
          EXPECT_EQ(id.size(), 32u);
          EXPECT_EQ(span["spanId"].get<std::string>().size(), 16u);
          trace_ids.insert(id);
        }
      }
    }
  }
  EXPECT_EQ(spans, bookstore_executions());
  EXPECT_EQ(trace_ids.size(), summary(bookstore())["traces"].get<size_t>());
}

TEST_F(SondeConvert, ThreadContinuationIsOneTraceInEveryFormat) {
  const std::string logs = (dir_ / "logs").string();
  const CliRun run = sonde({"run", "--out", logs, "--",
                            std::string(SONDE_BINARY_DIR) + "/tests/monitor/programs/test_workload",
                            "1", "0", "0", "context"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The log holds two traces (caller thread and continued thread) ...
  ASSERT_EQ(summary(logs)["traces"].get<int>(), 2);
  // ... which OTLP writes as one trace id and Chrome links with a flow.
  const std::string otlp = (dir_ / "t.otlp").string();
  ASSERT_EQ(sonde({"convert", logs, otlp, "--to", "otlp"}).exit_code, 0);
  std::set<std::string> ids;
  std::ifstream in(otlp);
  for (std::string line; std::getline(in, line);) {
    const json request = json::parse(line);  // named: a temporary would die before the loop
    for (const json& rs : request["resourceSpans"]) {
      for (const json& ss : rs["scopeSpans"]) {
        for (const json& span : ss["spans"]) ids.insert(span["traceId"].get<std::string>());
      }
    }
  }
  EXPECT_EQ(ids.size(), 1u);
  const std::string chrome = (dir_ / "t.chrome.json").string();
  const CliRun c = sonde({"convert", logs, chrome, "--to", "chrome"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.err.find("1 continued parts stitched"), std::string::npos) << c.err;
  std::ifstream chrome_in(chrome);
  int flow_starts = 0;
  const json events = json::parse(chrome_in)["traceEvents"];
  for (const json& e : events) flow_starts += e["ph"] == "s";
  EXPECT_EQ(flow_starts, 1);
}

TEST_F(SondeConvert, CompressedKiekerOutputKeepsEveryRecord) {
  const fs::path out = dir_ / "compressed";
  const CliRun r =
      sonde({"convert", bookstore(), out.string(), "--to", "kieker-bin", "--compression", "gzip"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t gz = 0;
  for (const auto& e : fs::directory_iterator(out)) gz += e.path().string().ends_with(".bin.gz");
  EXPECT_GE(gz, 1u);
  const json want = summary(bookstore());
  const json got = summary(out.string());
  EXPECT_EQ(got["records"], want["records"]);
  EXPECT_EQ(got["traces"], want["traces"]);
  EXPECT_EQ(got["record_types"], want["record_types"]);
}

TEST_F(SondeConvert, BadArgumentsAndOutputs) {
  CliRun r = sonde({"convert", bookstore(), (dir_ / "x").string(), "--to", "yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'yaml'"), std::string::npos) << r.err;
  r = sonde({"convert", bookstore(), "--to", "chrome"});
  EXPECT_EQ(r.exit_code, 2);
  r = sonde({"convert", bookstore(), (dir_ / "y").string(), "--to", "kieker-dat", "--compression",
             "rar"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'rar'"), std::string::npos) << r.err;
  r = sonde({"convert", bookstore(), (dir_ / "z.sonde").string(), "--to", "native", "--compression",
             "xz"});
  EXPECT_EQ(r.exit_code, 2);
  r = sonde({"convert", bookstore(), "a.json", "--out", "b.json", "--to", "chrome"});
  EXPECT_EQ(r.exit_code, 2);
  // A missing input leaves no output file behind.
  const fs::path out = dir_ / "never.json";
  r = sonde({"convert", (dir_ / "missing").string(), out.string(), "--to", "otlp"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("missing"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // An output that cannot be created is named.
  const std::string bad = (dir_ / "no-such-dir" / "out.json").string();
  r = sonde({"convert", bookstore(), bad, "--to", "openxtrace"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sonde::test
