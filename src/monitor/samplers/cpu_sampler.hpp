// CPU utilisation of the machine from /proc/stat, as Kieker's
// CPUUtilizationRecord: one record per core (cpuID "cpu0", "cpu1", ...) and
// one for all cores together (cpuID "all"), each field a fraction 0..1 of the
// jiffies that passed on that CPU since the previous sample.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "format/schema.hpp"
#include "monitor/samplers/sampler.hpp"

namespace sonde::monitor::samplers {

class CpuSampler final : public Sampler {
 public:
  // `schema` defaults to the built-in CPUUtilizationRecord; if there is none,
  // sample() produces nothing and says so in last_error().
  explicit CpuSampler(std::string hostname, std::string proc_root = "/proc",
                      const format::RecordSchema* schema = nullptr);

  std::string_view name() const override { return "cpu"; }
  void sample(int64_t now_epoch_ns, std::vector<format::Record>& out) override;

  // Cumulative jiffies of one /proc/stat "cpu" line (guest time is already
  // included in user and nice, so it is not counted again).
  struct Times {
    uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  };

 private:
  void sample_once(int64_t now_epoch_ns, std::vector<format::Record>& out);

  const format::RecordSchema* schema_;
  // Previous reading per cpuID (interned "all", "cpu0", ...). Replaced as a
  // whole each time, so CPUs taken offline drop out and new ones are primed.
  std::map<std::string_view, Times> previous_;
  std::string text_;  // reused read buffer
};

}  // namespace sonde::monitor::samplers
