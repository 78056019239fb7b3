#include "monitor/samplers/disk_sampler.hpp"

#include <algorithm>
#include <utility>

#include "monitor/samplers/proc_text.hpp"
#include "monitor/samplers/record_builder.hpp"
#include "monitor/samplers/system_records.hpp"

namespace sonde::monitor::samplers {
namespace {

// /proc/diskstats always counts 512-byte sectors, whatever the device's
// real sector size.
constexpr double kSectorBytes = 512.0;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool contains(const std::vector<std::string_view>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

bool DiskSampler::is_partition(std::string_view name,
                               const std::vector<std::string_view>& devices) {
  size_t digits = name.size();
  while (digits > 0 && is_digit(name[digits - 1])) --digits;
  if (digits == name.size() || digits == 0) return false;  // no partition number
  const std::string_view base = name.substr(0, digits);    // ends in a non-digit
  if (contains(devices, base)) return true;                // sda + 1
  return base.size() >= 2 && base.back() == 'p' && is_digit(base[base.size() - 2]) &&
         contains(devices, base.substr(0, base.size() - 1));  // nvme0n1 + p1
}

DiskSampler::DiskSampler(std::string hostname, std::string proc_root)
    : Sampler(std::move(hostname), std::move(proc_root)),
      schema_(format::find_builtin_schema(system_class::kDiskIo)) {}

void DiskSampler::sample(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  guarded(out, [&] { sample_once(now_epoch_ns, out); });
}

void DiskSampler::sample_once(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  if (schema_ == nullptr) return;  // format library without system schemas
  std::string error;
  const std::string file = path("diskstats");
  if (!read_text_file(file, &text_, &error)) {
    add_error(error);
    return;
  }

  // "major minor name" then 11 counters (kernel 4.18 adds 4 discard
  // counters, 5.5 two flush counters; those are ignored). Kernels before
  // 2.6.25 print partitions with only 4 counters; they are partitions anyway.
  std::vector<std::string_view> names;
  std::vector<Counters> counters;
  std::vector<std::string_view> tokens;
  std::string problem;
  size_t line_no = 0;
  for_each_line(text_, [&](std::string_view line) {
    ++line_no;
    if (!problem.empty()) return;
    split_fields(line, tokens);
    if (tokens.empty() || tokens.size() == 7) return;
    Counters c;
    uint64_t major = 0, minor = 0;
    if (tokens.size() < 14 || !parse_u64(tokens[0], &major) || !parse_u64(tokens[1], &minor) ||
        !parse_u64(tokens[3], &c.reads) || !parse_u64(tokens[5], &c.sectors_read) ||
        !parse_u64(tokens[7], &c.writes) || !parse_u64(tokens[9], &c.sectors_written) ||
        !parse_u64(tokens[12], &c.io_ms)) {
      problem = "line " + std::to_string(line_no) + ": malformed";
      return;
    }
    names.push_back(tokens[2]);
    counters.push_back(c);
  });
  if (problem.empty() && names.empty()) problem = "no devices";
  if (!problem.empty()) {
    add_error(file + ": " + problem);
    return;
  }

  const bool have_interval = primed_ && now_epoch_ns > previous_ns_;
  const double seconds =
      have_interval ? static_cast<double>(now_epoch_ns - previous_ns_) / 1e9 : 0.0;
  std::map<std::string_view, Counters> next;
  for (size_t i = 0; i < names.size(); ++i) {
    const Counters& now = counters[i];
    if (now.reads == 0 && now.writes == 0) continue;  // never used since boot
    if (is_partition(names[i], names)) continue;
    const std::string_view device = intern(names[i]);
    next[device] = now;
    if (!have_interval) continue;
    const auto it = previous_.find(device);
    if (it == previous_.end()) continue;
    const Counters& was = it->second;
    // Counters going down: the device was removed and re-added. Skip it once.
    if (now.reads < was.reads || now.sectors_read < was.sectors_read || now.writes < was.writes ||
        now.sectors_written < was.sectors_written || now.io_ms < was.io_ms) {
      continue;
    }
    // io_ms can run slightly ahead of the wall-clock interval because the two
    // are not read at the same instant; a device cannot be busier than always.
    const double busy =
        std::clamp(static_cast<double>(now.io_ms - was.io_ms) / (seconds * 1e3), 0.0, 1.0);
    RecordBuilder b(schema_);
    b.set_int("timestamp", now_epoch_ns)
        .set_string("hostname", hostname())
        .set_string("deviceName", device)
        .set_double("readBytesPerSecond", static_cast<double>(now.sectors_read - was.sectors_read) *
                                              kSectorBytes / seconds)
        .set_double(
            "writeBytesPerSecond",
            static_cast<double>(now.sectors_written - was.sectors_written) * kSectorBytes / seconds)
        .set_double("readsPerSecond", static_cast<double>(now.reads - was.reads) / seconds)
        .set_double("writesPerSecond", static_cast<double>(now.writes - was.writes) / seconds)
        .set_double("ioTimeFraction", busy);
    out.push_back(b.take());
  }
  primed_ = true;
  previous_ = std::move(next);
  previous_ns_ = now_epoch_ns;
}

}  // namespace sonde::monitor::samplers
