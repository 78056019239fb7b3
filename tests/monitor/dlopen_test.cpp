// Instrumented code that comes and goes: a plugin built with
// -finstrument-functions is dlopen'ed, called and dlclose'd round after
// round (tests/monitor/programs/plugin_host.cpp). Every call is recorded and
// named, including the static function, although the plugin is unloaded
// (and maybe mapped elsewhere) long before the writer or the reader
// resolves the addresses.
#include <gtest/gtest.h>

#include <map>

#include "run_helpers.hpp"

namespace sonde::test {
namespace {

const std::string kPluginPrograms = SONDE_TEST_PROGRAMS;

TEST(DlopenDlclose, EveryCallOfAnUnloadedPluginIsRecordedAndNamed) {
  const std::string out = fresh_dir("dlopen");
  const int rounds = 20, calls = 50;
  RunResult r =
      run_program({kPluginPrograms + "/test_plugin_host", kPluginPrograms + "/libtest_plugin.so",
                   std::to_string(rounds), std::to_string(calls)},
                  {"SONDE_OUT=" + out, "SONDE_SUMMARY=false",
                   // The preload library holds the dlclose hook.
                   std::string("LD_PRELOAD=") + SONDE_PRELOAD_LIBRARY + ":" + SONDE_LIBRARY});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const auto logs = files_with_suffix(out, ".sonde");
  ASSERT_EQ(logs.size(), 1u);
  LogContents c = read_contents(logs[0]);
  ASSERT_TRUE(c.stats.ok);
  std::map<std::string, int> before;
  for (const auto& [id, t] : c.traces) {
    EXPECT_EQ(trace_problem(t), "");
    for (const auto& e : t.events)
      if (e.kind == "before") ++before[e.operation];
  }
  std::string seen;
  for (const auto& [op, k] : before) seen += op + " x" + std::to_string(k) + "\n";
  // One trace per round, entered at plugin_work.
  EXPECT_EQ(c.traces.size(), static_cast<size_t>(rounds)) << seen;
  int work = 0, step = 0, other = 0;
  for (const auto& [op, k] : before) {
    if (op.find("plugin_work") != std::string::npos)
      work += k;
    else if (op.find("step(int)") != std::string::npos)
      step += k;
    else
      other += k;
  }
  EXPECT_EQ(work, rounds) << seen;
  EXPECT_EQ(step, rounds * calls) << "static function of the unloaded plugin\n" << seen;
  EXPECT_EQ(other, 0) << seen;
}

}  // namespace
}  // namespace sonde::test
