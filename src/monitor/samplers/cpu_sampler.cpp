#include "monitor/samplers/cpu_sampler.hpp"

#include <array>
#include <utility>

#include "monitor/samplers/proc_text.hpp"
#include "monitor/samplers/record_builder.hpp"

namespace sonde::monitor::samplers {
namespace {

// "cpu" (the aggregate) or "cpu<digits>"; other lines ("ctxt", "intr", ...)
// are not CPU lines.
bool is_cpu_label(std::string_view label, bool* aggregate) {
  if (label.substr(0, 3) != "cpu") return false;
  std::string_view digits = label.substr(3);
  *aggregate = digits.empty();
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Kernels before 2.6 print only user, nice, system and idle; later ones add
// iowait, irq, softirq, steal, guest and guest_nice. Missing columns are 0.
bool parse_times(const std::vector<std::string_view>& tokens, CpuSampler::Times* t) {
  if (tokens.size() < 5) return false;
  std::array<uint64_t, 8> v{};
  for (size_t i = 1; i < tokens.size(); ++i) {
    uint64_t x = 0;
    if (!parse_u64(tokens[i], &x)) return false;
    if (i - 1 < v.size()) v[i - 1] = x;
  }
  *t = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
  return true;
}

}  // namespace

CpuSampler::CpuSampler(std::string hostname, std::string proc_root,
                       const format::RecordSchema* schema)
    : Sampler(std::move(hostname), std::move(proc_root)),
      schema_(schema != nullptr
                  ? schema
                  : format::find_builtin_schema(format::kieker_class::kCpuUtilization)) {}

void CpuSampler::sample(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  guarded(out, [&] { sample_once(now_epoch_ns, out); });
}

void CpuSampler::sample_once(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  if (schema_ == nullptr) {
    add_error("no CPUUtilizationRecord schema is registered; no CPU records");
    return;
  }
  std::string error;
  const std::string file = path("stat");
  if (!read_text_file(file, &text_, &error)) {
    add_error(error);
    return;
  }

  // Parse the whole file before emitting anything: a malformed file yields
  // no records at all rather than a partial set.
  std::vector<std::pair<std::string_view, Times>> current;
  std::vector<std::string_view> tokens;
  bool malformed = false;
  size_t line_no = 0;
  for_each_line(text_, [&](std::string_view line) {
    ++line_no;
    if (malformed) return;
    split_fields(line, tokens);
    bool aggregate = false;
    if (tokens.empty() || !is_cpu_label(tokens[0], &aggregate)) return;
    Times t;
    if (!parse_times(tokens, &t)) {
      add_error(file + " line " + std::to_string(line_no) + ": malformed '" +
                std::string(tokens[0]) + "' line");
      malformed = true;
      return;
    }
    current.emplace_back(intern(aggregate ? std::string_view("all") : tokens[0]), t);
  });
  if (malformed) return;
  if (current.empty()) {
    add_error(file + ": no cpu lines");
    return;
  }

  std::map<std::string_view, Times> next;
  for (const auto& [id, now] : current) {
    const auto it = previous_.find(id);
    if (it == previous_.end()) {  // first reading of this CPU: prime only
      next[id] = now;
      continue;
    }
    const Times& was = it->second;
    const uint64_t user = counter_delta(now.user, was.user);
    const uint64_t nice = counter_delta(now.nice, was.nice);
    const uint64_t system = counter_delta(now.system, was.system);
    const uint64_t idle = counter_delta(now.idle, was.idle);
    const uint64_t iowait = counter_delta(now.iowait, was.iowait);
    const uint64_t irq = counter_delta(now.irq, was.irq) + counter_delta(now.softirq, was.softirq);
    const uint64_t steal = counter_delta(now.steal, was.steal);
    // The total is the sum of the clamped parts, so every fraction is in 0..1
    // and they add up to 1 (steal has no field of its own; it counts as busy).
    const uint64_t total = user + nice + system + idle + iowait + irq + steal;
    if (total == 0) {
      // No tick on this CPU since the base reading (the counters move in
      // USER_HZ ticks, 10 ms, as coarse as the shortest sampler_period_ms):
      // keep the base, so the next record covers the whole interval instead
      // of the interval being dropped.
      next[id] = was;
      continue;
    }
    next[id] = now;
    const double n = static_cast<double>(total);
    RecordBuilder b(schema_);
    b.set_int("timestamp", now_epoch_ns)
        .set_string("hostname", hostname())
        .set_string("cpuID", id)
        .set_double("user", static_cast<double>(user) / n)
        .set_double("system", static_cast<double>(system) / n)
        .set_double("wait", static_cast<double>(iowait) / n)
        .set_double("nice", static_cast<double>(nice) / n)
        .set_double("irq", static_cast<double>(irq) / n)
        // iowait is idle time as far as the CPU is concerned: it could have run
        // something else.
        .set_double("totalUtilization", static_cast<double>(total - idle - iowait) / n)
        .set_double("idle", static_cast<double>(idle) / n);
    out.push_back(b.take());
  }
  previous_ = std::move(next);
}

}  // namespace sonde::monitor::samplers
