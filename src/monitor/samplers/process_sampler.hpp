// The monitored process itself: CPU time and utilisation from
// /proc/self/stat (sonde.record.system.ProcessCpuRecord) and memory from
// /proc/self/status (sonde.record.system.ProcessMemoryRecord). The two files
// are read independently: if one is unreadable the other's record still comes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/schema.hpp"
#include "monitor/samplers/sampler.hpp"

namespace sonde::monitor::samplers {

class ProcessSampler final : public Sampler {
 public:
  // `ticks_per_second` is the unit of utime/stime in /proc/<pid>/stat;
  // 0 means sysconf(_SC_CLK_TCK). Tests pass a fixed value.
  explicit ProcessSampler(std::string hostname, std::string proc_root = "/proc",
                          long ticks_per_second = 0);

  std::string_view name() const override { return "process"; }
  // ProcessMemoryRecord from the first call; ProcessCpuRecord from the second
  // (its utilisation is a rate).
  void sample(int64_t now_epoch_ns, std::vector<format::Record>& out) override;

 private:
  void sample_cpu(int64_t now_epoch_ns, std::vector<format::Record>& out);
  void sample_memory(int64_t now_epoch_ns, std::vector<format::Record>& out);

  const format::RecordSchema* cpu_schema_;
  const format::RecordSchema* memory_schema_;
  double ticks_per_second_;
  bool primed_ = false;
  uint64_t previous_ticks_ = 0;  // utime + stime
  int64_t previous_ns_ = 0;
  std::string text_;
};

}  // namespace sonde::monitor::samplers
