// Memory and swap of the machine from /proc/meminfo, as Kieker's
// MemSwapUsageRecord (all fields in bytes). Needs no previous reading, so the
// first call already produces a record.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/schema.hpp"
#include "monitor/samplers/sampler.hpp"

namespace sonde::monitor::samplers {

class MemorySampler final : public Sampler {
 public:
  // `schema` defaults to the built-in MemSwapUsageRecord; if there is none,
  // sample() produces nothing and says so in last_error().
  explicit MemorySampler(std::string hostname, std::string proc_root = "/proc",
                         const format::RecordSchema* schema = nullptr);

  std::string_view name() const override { return "memory"; }
  void sample(int64_t now_epoch_ns, std::vector<format::Record>& out) override;

 private:
  void sample_once(int64_t now_epoch_ns, std::vector<format::Record>& out);

  const format::RecordSchema* schema_;
  std::string text_;
};

}  // namespace sonde::monitor::samplers
