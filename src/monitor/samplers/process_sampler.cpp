#include "monitor/samplers/process_sampler.hpp"

#include <unistd.h>

#include <utility>

#include "monitor/samplers/proc_text.hpp"
#include "monitor/samplers/record_builder.hpp"
#include "monitor/samplers/system_records.hpp"

namespace sonde::monitor::samplers {
namespace {

struct StatFields {
  int64_t pid = 0;
  uint64_t utime = 0, stime = 0;  // clock ticks
  int64_t threads = 0;
};

// /proc/<pid>/stat is "pid (comm) state ppid ...". comm may itself contain
// spaces and parentheses, so the fields are counted from the last ')'.
bool parse_stat(std::string_view text, StatFields* f) {
  const size_t open = text.find(" (");
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return false;
  }
  if (!parse_i64(text.substr(0, open), &f->pid)) return false;
  std::vector<std::string_view> tokens;
  split_fields(trim(text.substr(close + 1)), tokens);
  // tokens[0] is field 3 (state), so field N is tokens[N - 3]:
  // utime 14, stime 15, num_threads 20.
  if (tokens.size() < 18) return false;
  return parse_u64(tokens[11], &f->utime) && parse_u64(tokens[12], &f->stime) &&
         parse_i64(tokens[17], &f->threads);
}

struct StatusFields {
  int64_t pid = -1;
  int64_t rss = -1, vm_size = -1, peak_rss = -1;  // bytes; -1 = line not seen
};

// Lines such as "VmRSS:\t   1234 kB" and "Pid:\t42". Returns the name of a
// missing or malformed key, or empty on success.
std::string parse_status(std::string_view text, StatusFields* f) {
  std::string bad;
  std::vector<std::string_view> tokens;
  for_each_line(text, [&](std::string_view line) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !bad.empty()) return;
    const std::string_view key = line.substr(0, colon);
    int64_t* slot = key == "Pid"      ? &f->pid
                    : key == "VmRSS"  ? &f->rss
                    : key == "VmSize" ? &f->vm_size
                    : key == "VmHWM"  ? &f->peak_rss
                                      : nullptr;
    if (slot == nullptr) return;
    split_fields(line.substr(colon + 1), tokens);
    const bool is_pid = slot == &f->pid;
    int64_t v = 0;
    if (tokens.size() != (is_pid ? 1u : 2u) || !parse_i64(tokens[0], &v) || v < 0 ||
        (!is_pid && (tokens[1] != "kB" || v > INT64_MAX / 1024))) {
      bad = key;
      return;
    }
    *slot = is_pid ? v : v * 1024;
  });
  if (!bad.empty()) return "malformed '" + bad + "' line";
  if (f->pid < 0) return "no Pid line";
  if (f->rss < 0) return "no VmRSS line";
  if (f->vm_size < 0) return "no VmSize line";
  if (f->peak_rss < 0) return "no VmHWM line";
  return {};
}

}  // namespace

ProcessSampler::ProcessSampler(std::string hostname, std::string proc_root, long ticks_per_second)
    : Sampler(std::move(hostname), std::move(proc_root)),
      cpu_schema_(format::find_builtin_schema(system_class::kProcessCpu)),
      memory_schema_(format::find_builtin_schema(system_class::kProcessMemory)) {
  if (ticks_per_second <= 0) ticks_per_second = ::sysconf(_SC_CLK_TCK);
  // sysconf cannot really fail for _SC_CLK_TCK; 100 is the value on every
  // Linux architecture should it ever do so.
  ticks_per_second_ = ticks_per_second > 0 ? static_cast<double>(ticks_per_second) : 100.0;
}

void ProcessSampler::sample(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  guarded(out, [&] {
    sample_cpu(now_epoch_ns, out);
    sample_memory(now_epoch_ns, out);
  });
}

void ProcessSampler::sample_cpu(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  if (cpu_schema_ == nullptr) return;  // format library without system schemas
  std::string error;
  const std::string file = path("self/stat");
  if (!read_text_file(file, &text_, &error)) {
    add_error(error);
    return;
  }
  StatFields f;
  if (!parse_stat(text_, &f)) {
    add_error(file + ": malformed");
    return;
  }
  const uint64_t ticks = f.utime + f.stime;
  // A clock stepped backwards gives no interval: re-prime instead of
  // reporting a negative or infinite rate.
  const bool have_interval = primed_ && now_epoch_ns > previous_ns_;
  const uint64_t busy_ticks = counter_delta(ticks, previous_ticks_);
  const int64_t interval_ns = now_epoch_ns - (have_interval ? previous_ns_ : now_epoch_ns);
  primed_ = true;
  previous_ticks_ = ticks;
  previous_ns_ = now_epoch_ns;
  if (!have_interval) return;
  const double busy_s = static_cast<double>(busy_ticks) / ticks_per_second_;
  const double interval_s = static_cast<double>(interval_ns) / 1e9;

  RecordBuilder b(cpu_schema_);
  b.set_int("timestamp", now_epoch_ns)
      .set_string("hostname", hostname())
      .set_int("pid", f.pid)
      .set_double("userSeconds", static_cast<double>(f.utime) / ticks_per_second_)
      .set_double("systemSeconds", static_cast<double>(f.stime) / ticks_per_second_)
      .set_double("utilization", busy_s / interval_s)
      .set_int("threads", f.threads);
  out.push_back(b.take());
}

void ProcessSampler::sample_memory(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  if (memory_schema_ == nullptr) return;
  std::string error;
  const std::string file = path("self/status");
  if (!read_text_file(file, &text_, &error)) {
    add_error(error);
    return;
  }
  StatusFields f;
  if (std::string problem = parse_status(text_, &f); !problem.empty()) {
    add_error(file + ": " + problem);
    return;
  }
  RecordBuilder b(memory_schema_);
  b.set_int("timestamp", now_epoch_ns)
      .set_string("hostname", hostname())
      .set_int("pid", f.pid)
      .set_int("rssBytes", f.rss)
      .set_int("vmSizeBytes", f.vm_size)
      .set_int("peakRssBytes", f.peak_rss);
  out.push_back(b.take());
}

}  // namespace sonde::monitor::samplers
