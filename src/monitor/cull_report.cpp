// Culling's report (the patterns file for the next run, written after each
// decision) and the summary it prints at exit.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "monitor/callsite_patch.hpp"
#include "monitor/controller.hpp"
#include "monitor/cull_state.hpp"
#include "monitor/probe_busy.hpp"
#include "monitor/process_info.hpp"

namespace sonde::monitor {
namespace culling {
namespace {

std::string report_path_for(const Config& config) {
  ProcessInfo p = describe_process(config);
  return config.out_dir + "/" + p.application + "-" + std::to_string(p.pid) + ".cull.txt";
}

}  // namespace

// Written under a temporary name and renamed, so that whoever waits for the
// report (sonde run, a test) never reads half of it.
void write_report(Cull& c) {
  const Config& config = current_config();
  c.report_path = report_path_for(config);
  c.report_error.clear();
  std::error_code ec;
  std::filesystem::create_directories(config.out_dir, ec);
  std::string tmp = c.report_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << cull::format_report(c.report);
    out.close();
    if (!out) {
      c.report_error = "cannot write " + tmp + ": " + std::strerror(errno);
      c.report_path.clear();
      return;
    }
  }
  if (std::rename(tmp.c_str(), c.report_path.c_str()) != 0) {
    c.report_error = "cannot rename " + tmp + ": " + std::strerror(errno);
    c.report_path.clear();
  }
}

void merge(std::map<std::string, cull::ReportEntry>& into, const std::string& name,
           const cull::FunctionSample& f) {
  cull::ReportEntry& e = into[name];
  e.name = name;
  e.sample.calls += f.calls;
  e.sample.total_ns += f.total_ns;
  e.sample.callees += f.callees;
}

std::vector<cull::ReportEntry> sorted_entries(const std::map<std::string, cull::ReportEntry>& m) {
  std::vector<cull::ReportEntry> out;
  for (const auto& [name, e] : m) out.push_back(e);
  cull::sort_by_calls(out);
  return out;
}

}  // namespace culling

using namespace culling;

void cull_print_summary(const FunctionNames& names) {
  Cull& c = cull_state();
  MonitorLock lock(c.mu);
  // A program that ends during its first window still gets the report
  // (for the next run's patterns_file), if it made any monitored call.
  if (c.phase == Phase::kObserving && c.windows == 0 && c.window->calls != 0) {
    decide(c, /*at_exit=*/true, names);
  }
  if (c.windows == 0 || !current_config().summary) return;
  const cull::Report& r = c.report;
  const double probe_ns = c.thresholds.probe_ns;
  if (c.inherited) {
    std::fprintf(stderr, "sonde: cull: the functions culled before fork() stay excluded\n");
  }
  // Decided at exit, the report names what the first window would have
  // culled; of those, the straight-line leaves were excluded already.
  // A first window still open at exit: its candidates were not excluded,
  // unless every one of them was culled before the window's end.
  const cull::Round* open = c.decided_at_exit && !r.rounds.empty() ? &r.rounds.back() : nullptr;
  const bool all_during_run = open != nullptr && open->culled == open->leaves + open->short_calls;
  std::string what = open != nullptr && !all_during_run ? "would be excluded" : "excluded";
  if (open != nullptr && all_during_run && open->culled != 0) {
    what += " (before the first window ended)";
  } else if (open != nullptr) {
    const cull::Round& last = *open;
    if (last.leaves != 0 && last.short_calls == 0) {
      what += " (" + std::to_string(last.leaves) +
              " straight-line leaves of them were, during the run)";
    } else if (last.leaves + last.short_calls != 0) {
      what += " (" + std::to_string(last.leaves + last.short_calls) +
              " of them were, during the run: " + std::to_string(last.leaves) +
              " straight-line leaves, " + std::to_string(last.short_calls) +
              " others culled early)";
    }
  }
  std::fprintf(stderr,
               "sonde: cull: %zu functions %s (%u windows observed, %u pause(s) ended early by "
               "new functions), report: %s\n",
               r.culled.size(), what.c_str(), c.windows, c.pauses_cut,
               c.report_path.empty() ? c.report_error.c_str() : c.report_path.c_str());
  for (size_t i = 0; i < r.rounds.size(); ++i) {
    const cull::Round& round = r.rounds[i];
    cull::Prediction p = cull::predict(round, probe_ns);
    std::fprintf(stderr,
                 "sonde: cull: round %zu: %zu culled, predicted probe cost %.1f -> %.1f ms/s (%s "
                 "-> %smonitored calls/s x %.0f ns)\n",
                 i + 1, round.culled, p.cost_ms_per_s_before, p.cost_ms_per_s_after,
                 cull::si(p.calls_per_s_before).c_str(), cull::si(p.calls_per_s_after).c_str(),
                 probe_ns);
  }
  if (c.excluded_any) {
    for (const auto& [address, st] : c.window->stats)
      if (is_culled(c, address)) c.culled_since_change += st.calls;
    c.window->stats.clear();  // counted once, should the summary run again
    c.window->cache = {};
    double seconds = static_cast<double>(monotonic_ns_now() - c.last_change.mono_ns) / 1e9;
    double rate = cull::calls_per_second(c.calls_since_change, seconds);
    std::fprintf(
        stderr,
        "sonde: cull: measured since the last exclusion: %smonitored calls/s (%.1f ms/s) "
        "over %.3f s, %s calls of culled functions seen in the windows observed after it\n",
        cull::si(rate).c_str(), rate * probe_ns / 1e6, seconds,
        cull::grouped(c.culled_since_change).c_str());
  }
  std::fprintf(stderr, "sonde: cull: %s\n", callsite_patch_summary().c_str());
}

}  // namespace sonde::monitor
