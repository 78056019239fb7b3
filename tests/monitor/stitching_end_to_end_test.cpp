// Real continued traces from the monitoring core, stitched: a context
// handed to a helper thread, and a traceparent handed to a second process.
// The logs are read with read_log, reconstructed and stitched; the result
// is exported to OPEN.xtrace, validated, read back and stitched again.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "analysis/export/openxtrace_export.hpp"
#include "format/log_reader.hpp"
#include "format/openxtrace_reader.hpp"
#include "format/openxtrace_validate.hpp"
#include "run_helpers.hpp"
#include "stitched_log.hpp"

namespace sonde::test {
namespace {

std::string shape(const analysis::StitchedTrace& t) {
  std::ostringstream s;
  for (const analysis::SubTrace& p : t.parts) {
    s << "part parent=" << p.parent << "@" << p.parent_execution << " thread=" << p.trace.thread_id
      << " links=" << p.trace.parent_order_id << "\n";
    for (const analysis::Execution& e : p.trace.executions) {
      s << "  " << e.eoi << "," << e.ess << " " << e.operation << " " << e.tin << ".." << e.tout
        << "\n";
    }
  }
  return s.str();
}

bool operation_contains(const analysis::Trace& t, size_t i, const std::string& text) {
  return i < t.executions.size() &&
         std::string(t.executions[i].operation).find(text) != std::string::npos;
}

// Exports `log` to OPEN.xtrace, validates it, reads it back, and checks the
// stitched result is the one stitched from the log itself.
void expect_openxtrace_round_trip(const std::string& log, const std::string& json_path,
                                  const StitchedLog& direct) {
  {
    std::ofstream out(json_path);
    analysis::OpenXtraceExportOptions options;
    options.stitching.child_timeout_ns = 0;
    const analysis::OpenXtraceExportResult r = analysis::export_openxtrace(log, out, options);
    ASSERT_TRUE(r.ok()) << (r.read.errors.empty() ? "" : r.read.errors[0]);
    EXPECT_EQ(r.written.traces, direct.out.traces.size());
  }
  std::ifstream in(json_path);
  const std::vector<format::OpenXtraceIssue> issues = format::validate_openxtrace(in);
  EXPECT_EQ(format::count_errors(issues), 0u)
      << (issues.empty() ? "" : issues[0].path + ": " + issues[0].message);
  ASSERT_EQ(format::detect_log_kind(json_path), format::LogKind::kOpenXtrace);
  StitchedLog again(json_path);
  ASSERT_TRUE(again.read.ok) << (again.read.errors.empty() ? "" : again.read.errors[0]);
  ASSERT_EQ(again.out.traces.size(), direct.out.traces.size());
  for (size_t i = 0; i < direct.out.traces.size(); ++i) {
    EXPECT_EQ(shape(again.out.traces[i]), shape(direct.out.traces[i]));
  }
}

TEST(StitchingEndToEnd, ContextContinuedInAHelperThreadIsOneTrace) {
  const std::string out = fresh_dir("stitch_context");
  RunResult r = run_program({kWorkload, "1", "0", "0", "context"}, env_for(out));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const std::string log = files_with_suffix(out, ".sonde").at(0);
  StitchedLog s(log);
  ASSERT_TRUE(s.read.ok) << (s.read.errors.empty() ? "" : s.read.errors[0]);
  ASSERT_EQ(s.out.traces.size(), 1u) << "the helper's trace joins its parent";
  const analysis::StitchedTrace& t = s.out.traces[0];
  ASSERT_EQ(t.parts.size(), 2u);
  EXPECT_TRUE(operation_contains(t.parts[0].trace, 0, "shop.parent"));
  EXPECT_TRUE(operation_contains(t.parts[1].trace, 0, "shop.leaf"));
  EXPECT_EQ(t.parts[1].parent, 0);
  EXPECT_EQ(t.parts[1].parent_execution, 0) << "captured inside shop.parent";
  EXPECT_NE(t.parts[1].trace.thread_id, t.parts[0].trace.thread_id);
  EXPECT_EQ(s.stats.parts_stitched, 1u);
  EXPECT_EQ(s.stats.orphans, 0u);
  expect_openxtrace_round_trip(log, out + "/context.json", s);
}

TEST(StitchingEndToEnd, TraceparentHandedToAnotherProcessIsOneTrace) {
  const std::string out = fresh_dir("stitch_remote");
  RunResult r = run_program({kWorkload, "1", "0", "0", "remote"}, env_for(out));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(files_with_suffix(out, ".sonde").size(), 2u) << "one log per process";
  // Each process's log alone: the server's trace is an orphan.
  for (const std::string& log : files_with_suffix(out, ".sonde")) {
    StitchedLog alone(log);
    ASSERT_EQ(alone.out.traces.size(), 1u);
    const bool server = operation_contains(alone.out.traces[0].parts[0].trace, 0, "shop.server");
    EXPECT_EQ(alone.stats.orphans, server ? 1u : 0u);
  }
  // Both logs (the directory): one trace across the two processes.
  StitchedLog s(out);
  ASSERT_TRUE(s.read.ok) << (s.read.errors.empty() ? "" : s.read.errors[0]);
  ASSERT_EQ(s.out.traces.size(), 1u);
  const analysis::StitchedTrace& t = s.out.traces[0];
  ASSERT_EQ(t.parts.size(), 2u);
  EXPECT_TRUE(operation_contains(t.parts[0].trace, 0, "shop.client"));
  const analysis::Trace& server = t.parts[1].trace;
  ASSERT_EQ(server.executions.size(), 2u);
  EXPECT_TRUE(operation_contains(server, 0, "shop.server"));
  EXPECT_TRUE(operation_contains(server, 1, "shop.leaf"));
  EXPECT_EQ(server.executions[1].ess, 1);
  EXPECT_EQ(t.parts[1].parent_execution, 0);
  EXPECT_EQ(s.stats.orphans, 0u);
  expect_openxtrace_round_trip(out, out + "/remote.json", s);
}

}  // namespace
}  // namespace sonde::test
