// Block device I/O from /proc/diskstats, as sonde.record.system.DiskIoRecord:
// bytes and operations per second and the fraction of time the device was
// busy. Whole devices only: partitions would count the same I/O twice, and
// devices that have never done any I/O (unused loop, ram, zram) are left out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "format/schema.hpp"
#include "monitor/samplers/sampler.hpp"

namespace sonde::monitor::samplers {

class DiskSampler final : public Sampler {
 public:
  explicit DiskSampler(std::string hostname, std::string proc_root = "/proc");

  std::string_view name() const override { return "disk"; }
  // Records from the second call on, as for NetworkSampler.
  void sample(int64_t now_epoch_ns, std::vector<format::Record>& out) override;

  struct Counters {
    uint64_t reads = 0, sectors_read = 0, writes = 0, sectors_written = 0, io_ms = 0;
  };

  // True if `name` is a partition of another device in `devices`, by the
  // kernel's naming rule: a disk whose name ends in a digit gets partitions
  // "<disk>p<N>" (nvme0n1p1, mmcblk0p2, loop0p1), any other disk "<disk><N>"
  // (sda1, vdb3). Works from /proc/diskstats alone, without /sys.
  static bool is_partition(std::string_view name, const std::vector<std::string_view>& devices);

 private:
  void sample_once(int64_t now_epoch_ns, std::vector<format::Record>& out);

  const format::RecordSchema* schema_;
  std::map<std::string_view, Counters> previous_;  // keys interned
  int64_t previous_ns_ = 0;
  bool primed_ = false;
  std::string text_;
};

}  // namespace sonde::monitor::samplers
