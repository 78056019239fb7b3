// The culling rule: which functions cost more to trace than their traces
// tell. Shared by the in-process first phase (monitor/cull.cpp) and by
// `sonde cull LOG` (cli/cmd_cull.cpp), so both decide alike. Header-only and
// free of libsonde's state, so the CLI and the unit tests use this very code
// without linking libsonde's hidden internals (docs/cull.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::monitor::cull {

// Defaults and their reasons: docs/cull.md and docs/configuration.md.
struct Thresholds {
  uint64_t min_calls = 100;  // fewer calls: the mean means little, and culling saves little
  double min_rate =
      1000;              // calls per second below which a function's probes cost nothing noticeable
  double max_ns = 2000;  // own mean duration under which the probe is >= probe_ns / max_ns of it
  double probe_ns = 20;  // cost of one monitored call (enter + exit) on this machine
};

// One function's calls as observed: inclusive durations as measured, i.e.
// with the probes of the monitored calls inside them included.
struct FunctionSample {
  uint64_t calls = 0;
  double total_ns = 0;   // sum of the inclusive durations
  uint64_t callees = 0;  // monitored calls made inside these calls, at any depth
};

inline double mean_ns(const FunctionSample& f) {
  return f.calls == 0 ? 0 : f.total_ns / static_cast<double>(f.calls);
}

// The mean duration the function would have without the probes of its
// monitored callees: a function that calls 100 tiny helpers looks 100
// probe costs longer than it is, and would otherwise never be culled even
// after its helpers are.
inline double own_mean_ns(const FunctionSample& f, double probe_ns) {
  if (f.calls == 0) return 0;
  double callees_per_call = static_cast<double>(f.callees) / static_cast<double>(f.calls);
  return std::max(0.0, mean_ns(f) - callees_per_call * probe_ns);
}

// `span_s`: the observation's wall-clock length. Shorter than a
// millisecond counts as one, so a burst of calls right at the start does
// not look like an unbounded rate.
inline double calls_per_second(uint64_t calls, double span_s) {
  return static_cast<double>(calls) / std::max(span_s, 1e-3);
}

// The rule: called often (in number and per second) and short on its own.
inline bool should_cull(const FunctionSample& f, double span_s, const Thresholds& t) {
  return f.calls >= t.min_calls && calls_per_second(f.calls, span_s) >= t.min_rate &&
         own_mean_ns(f, t.probe_ns) < t.max_ns;
}

// The probes' cost per second of wall time: monitored calls per second
// times the cost of one. As a share of one core it is about the slowdown of
// a single-threaded program.
struct Prediction {
  double calls_per_s_before = 0;
  double calls_per_s_after = 0;
  double cost_ms_per_s_before = 0;
  double cost_ms_per_s_after = 0;
};

inline Prediction predict(uint64_t calls_total, uint64_t calls_culled, double span_s,
                          double probe_ns) {
  Prediction p;
  p.calls_per_s_before = calls_per_second(calls_total, span_s);
  p.calls_per_s_after = calls_per_second(calls_total - std::min(calls_culled, calls_total), span_s);
  p.cost_ms_per_s_before = p.calls_per_s_before * probe_ns / 1e6;
  p.cost_ms_per_s_after = p.calls_per_s_after * probe_ns / 1e6;
  return p;
}

// A pattern line that excludes exactly `name` (and, at worst, names that
// differ from it only where it has a glob character). Patterns have no
// escapes: '*' and '?' in a name (operator*) would be wildcards, ';' would
// split the line, so these become '?', which matches the character itself.
// Leading and trailing blanks, which the parser trims, become '?' too.
inline std::string exclude_line(std::string_view name) {
  std::string glob(name);
  for (char& c : glob) {
    if (c == '*' || c == ';' || c == '\n' || c == '\r') c = '?';
  }
  if (!glob.empty() && (glob.front() == ' ' || glob.front() == '\t')) glob.front() = '?';
  if (!glob.empty() && (glob.back() == ' ' || glob.back() == '\t')) glob.back() = '?';
  return "-" + glob;
}

// 12345678 -> "12,345,678".
inline std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// 12.3 M, 4.5 k: rates in the report and the summaries.
inline std::string si(double v) {
  char buf[32];
  if (v >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.1f G", v / 1e9);
  } else if (v >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f M", v / 1e6);
  } else if (v >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.1f k", v / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f ", v);
  }
  return buf;
}

struct ReportEntry {
  std::string name;
  FunctionSample sample;  // as observed in the round that decided it
};

// One observation window and what it decided. `sonde cull LOG` has one;
// cull = auto observes window after window, so that functions that only get
// hot after the program's start-up are culled too.
struct Round {
  uint64_t calls = 0;         // monitored calls observed
  uint64_t functions = 0;     // distinct functions observed
  double span_s = 0;          // wall-clock length of the observation
  size_t culled = 0;          // functions this round culled
  uint64_t culled_calls = 0;  // their calls in this round
  size_t leaves = 0;          // of `culled`, straight-line leaves culled before the round ended
  size_t short_calls = 0;     // of `culled`, others culled before it ended (cull_early_percent)
};

inline Prediction predict(const Round& r, double probe_ns) {
  return predict(r.calls, r.culled_calls, r.span_s, probe_ns);
}

// Everything the report file says; the same for both sources.
struct Report {
  std::string source;              // "pid 1234 (./db_bench)" or the log's path
  std::vector<std::string> notes;  // extra header lines (phase end, warnings)
  Thresholds thresholds;
  uint32_t leaf_instructions = 0;   // cull_leaf_instructions; 0: leaves wait for the rule
  double early_share = 0;           // cull_early_percent / 100; 0: off
  std::vector<Round> rounds;        // in order; only those that decided something, and the first
  std::vector<ReportEntry> culled;  // all rounds, sorted by calls, most first
  std::vector<ReportEntry> pinned;  // would be culled, but a pattern or --keep keeps them
  std::vector<ReportEntry> kept;    // the most called of the rest, in the latest round
};

inline void sort_by_calls(std::vector<ReportEntry>& entries) {
  std::sort(entries.begin(), entries.end(), [](const ReportEntry& a, const ReportEntry& b) {
    return a.sample.calls != b.sample.calls ? a.sample.calls > b.sample.calls : a.name < b.name;
  });
}

// The report as a patterns file: '#' comment lines, then one '-name' line
// per culled function, so `--set patterns_file=REPORT` repeats the culling
// from the start of the next run.
inline std::string format_report(const Report& r) {
  const Thresholds& t = r.thresholds;
  std::string out;
  char line[512];
  // The pattern parser splits lines at ';' before it sees a '#': a comment
  // must not contain one, or its tail would be read as a rule.
  auto add = [&out](std::string s) {
    if (s.rfind("#", 0) == 0) std::replace(s.begin(), s.end(), ';', ',');
    out += s + "\n";
  };
  add("# sonde cull: functions that cost more to trace than they tell, excluded.");
  add("# A patterns file: the next run can start with them excluded:");
  add("#   sonde run --set patterns_file=THIS_FILE -- PROGRAM ...");
  add("# ('+glob' lines appended after them pin functions back in.)");
  add("# Source: " + r.source);
  for (const std::string& n : r.notes) add("# " + n);
  std::snprintf(line, sizeof line,
                "# Rule: culled when called >= %llu times and >= %.0f times/s, and the mean "
                "inclusive duration less %.1f ns per monitored call inside it is < %.0f ns",
                static_cast<unsigned long long>(t.min_calls), t.min_rate, t.probe_ns, t.max_ns);
  add(line);
  if (r.leaf_instructions != 0) {
    std::snprintf(line, sizeof line,
                  "# Leaves: a straight-line function of at most %u instructions that calls "
                  "nothing but the hooks is culled once it has %llu calls at that rate, "
                  "without waiting for its duration",
                  r.leaf_instructions, static_cast<unsigned long long>(t.min_calls));
    add(line);
  }
  if (r.early_share > 0) {
    std::snprintf(line, sizeof line,
                  "# Early: a function whose own mean over its first %llu calls in a window is "
                  "< %.0f ns (%.0f %% of the rule's) is culled then, without waiting for the "
                  "window's end",
                  static_cast<unsigned long long>(t.min_calls), r.early_share * t.max_ns,
                  r.early_share * 100);
    add(line);
  }
  for (size_t i = 0; i < r.rounds.size(); ++i) {
    const Round& round = r.rounds[i];
    const Prediction p = predict(round, t.probe_ns);
    std::string label = r.rounds.size() == 1 ? "Observed" : "Round " + std::to_string(i + 1);
    std::snprintf(line, sizeof line,
                  "# %s: %s monitored calls of %s functions in %.3f s (%scalls/s), %zu culled "
                  "(%s of those calls)",
                  label.c_str(), grouped(round.calls).c_str(), grouped(round.functions).c_str(),
                  round.span_s, si(p.calls_per_s_before).c_str(), round.culled,
                  grouped(round.culled_calls).c_str());
    std::string text = line;
    if (round.leaves != 0) {
      text.pop_back();  // ")"
      text += ", " + std::to_string(round.leaves) + " of them straight-line leaves)";
    }
    if (round.short_calls != 0) {
      text.pop_back();
      text += ", " + std::to_string(round.short_calls) + " of them others culled early)";
    }
    add(text);
    std::snprintf(line, sizeof line,
                  "#   predicted probe cost: before %.1f ms/s (%scalls/s x %.1f ns), after %.1f "
                  "ms/s (%scalls/s)",
                  p.cost_ms_per_s_before, si(p.calls_per_s_before).c_str(), t.probe_ns,
                  p.cost_ms_per_s_after, si(p.calls_per_s_after).c_str());
    add(line);
  }
  std::snprintf(line, sizeof line, "# Culled: %zu functions, pinned in: %zu", r.culled.size(),
                r.pinned.size());
  add(line);
  auto entry_comment = [&](const char* what, const ReportEntry& e) {
    std::snprintf(line, sizeof line, "# %s %14s calls, mean %10.1f ns, own %10.1f ns: ", what,
                  grouped(e.sample.calls).c_str(), mean_ns(e.sample),
                  own_mean_ns(e.sample, t.probe_ns));
    return std::string(line) + e.name;
  };
  for (const ReportEntry& e : r.pinned) add(entry_comment("pinned", e));
  for (const ReportEntry& e : r.kept) add(entry_comment("kept  ", e));
  for (const ReportEntry& e : r.culled) {
    add(entry_comment("culled", e));
    add(exclude_line(e.name));
  }
  return out;
}

}  // namespace sonde::monitor::cull
