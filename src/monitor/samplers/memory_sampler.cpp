#include "monitor/samplers/memory_sampler.hpp"

#include <optional>
#include <utility>

#include "monitor/samplers/proc_text.hpp"
#include "monitor/samplers/record_builder.hpp"

namespace sonde::monitor::samplers {
namespace {

struct MemInfo {
  std::optional<uint64_t> mem_total, mem_free, mem_available, buffers, cached, reclaimable,
      swap_total, swap_free;

  std::optional<uint64_t>* slot(std::string_view key) {
    if (key == "MemTotal") return &mem_total;
    if (key == "MemFree") return &mem_free;
    if (key == "MemAvailable") return &mem_available;
    if (key == "Buffers") return &buffers;
    if (key == "Cached") return &cached;
    if (key == "SReclaimable") return &reclaimable;
    if (key == "SwapTotal") return &swap_total;
    if (key == "SwapFree") return &swap_free;
    return nullptr;
  }
};

// "<value> kB" or "<value>" (a count or bytes). Returns bytes.
bool parse_amount(std::string_view rest, uint64_t* bytes) {
  std::vector<std::string_view> tokens;
  split_fields(rest, tokens);
  if (tokens.empty() || tokens.size() > 2 || !parse_u64(tokens[0], bytes)) return false;
  if (tokens.size() == 1) return true;
  if (tokens[1] != "kB" || *bytes > UINT64_MAX / 1024) return false;
  *bytes *= 1024;  // the kernel's "kB" is KiB
  return true;
}

}  // namespace

MemorySampler::MemorySampler(std::string hostname, std::string proc_root,
                             const format::RecordSchema* schema)
    : Sampler(std::move(hostname), std::move(proc_root)),
      schema_(schema != nullptr
                  ? schema
                  : format::find_builtin_schema(format::kieker_class::kMemSwapUsage)) {}

void MemorySampler::sample(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  guarded(out, [&] { sample_once(now_epoch_ns, out); });
}

void MemorySampler::sample_once(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  if (schema_ == nullptr) {
    add_error("no MemSwapUsageRecord schema is registered; no memory records");
    return;
  }
  std::string error;
  const std::string file = path("meminfo");
  if (!read_text_file(file, &text_, &error)) {
    add_error(error);
    return;
  }

  MemInfo m;
  std::string bad_key;
  for_each_line(text_, [&](std::string_view line) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !bad_key.empty()) return;
    const std::string_view key = trim(line.substr(0, colon));
    std::optional<uint64_t>* slot = m.slot(key);
    if (slot == nullptr) return;
    uint64_t bytes = 0;
    if (!parse_amount(line.substr(colon + 1), &bytes)) {
      bad_key = key;
      return;
    }
    *slot = bytes;
  });
  if (!bad_key.empty()) {
    add_error(file + ": malformed '" + bad_key + "' line");
    return;
  }
  for (const auto& [key, value] :
       {std::pair{"MemTotal", m.mem_total}, std::pair{"MemFree", m.mem_free},
        std::pair{"SwapTotal", m.swap_total}, std::pair{"SwapFree", m.swap_free}}) {
    if (!value) {
      add_error(file + ": no " + key + " line");
      return;
    }
  }

  // "Free" means available to new allocations without swapping: MemAvailable
  // (kernel 3.14+), which counts reclaimable page cache, not the literal
  // MemFree that a busy machine always keeps near zero. Older kernels get the
  // classic estimate free + buffers + cached + reclaimable slab.
  const uint64_t total = *m.mem_total;
  uint64_t available = m.mem_available ? *m.mem_available
                                       : *m.mem_free + m.buffers.value_or(0) +
                                             m.cached.value_or(0) + m.reclaimable.value_or(0);
  if (available > total) available = total;
  const uint64_t swap_free = *m.swap_free < *m.swap_total ? *m.swap_free : *m.swap_total;

  RecordBuilder b(schema_);
  b.set_int("timestamp", now_epoch_ns)
      .set_string("hostname", hostname())
      .set_int("memTotal", to_i64(total))
      .set_int("memUsed", to_i64(total - available))
      .set_int("memFree", to_i64(available))
      .set_int("swapTotal", to_i64(*m.swap_total))
      .set_int("swapUsed", to_i64(*m.swap_total - swap_free))
      .set_int("swapFree", to_i64(swap_free));
  out.push_back(b.take());
}

}  // namespace sonde::monitor::samplers
