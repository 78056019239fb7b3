// sonde's own sampler records. The monitored process has no Kieker record;
// interfaces and block devices get records shaped after what /proc reports
// (cumulative counters, busy-time fraction) rather than Kieker's Sigar-shaped
// NetworkUtilizationRecord and DiskUsageRecord (link speed, carrier, queue).
// CPU and memory/swap use Kieker's CPUUtilizationRecord and MemSwapUsageRecord
// (builtin_schemas_kieker.cpp). Fields, units and sources: docs/samplers.md.
//
// Conventions shared by all four: `timestamp` is epoch nanoseconds, like the
// trace events; sizes are bytes; rates are per second over the sampling period.
#include <array>

#include "format/builtin_schemas.hpp"

namespace sonde::format {
namespace {

using T = FieldType;

// Built on first use rather than at namespace scope so that a lookup made
// during another file's static initialisation cannot see unconstructed schemas.
std::array<RecordSchema, 5> make_schemas() {
  return {RecordSchema{"sonde.record.system.ProcessCpuRecord",
                       {{"timestamp", T::kInt64},
                        {"hostname", T::kString},
                        {"pid", T::kInt32},
                        {"userSeconds", T::kDouble},
                        {"systemSeconds", T::kDouble},
                        {"utilization", T::kDouble},
                        {"threads", T::kInt32}}},
          RecordSchema{"sonde.record.system.ProcessMemoryRecord",
                       {{"timestamp", T::kInt64},
                        {"hostname", T::kString},
                        {"pid", T::kInt32},
                        {"rssBytes", T::kInt64},
                        {"vmSizeBytes", T::kInt64},
                        {"peakRssBytes", T::kInt64}}},
          RecordSchema{"sonde.record.system.NetworkInterfaceRecord",
                       {{"timestamp", T::kInt64},
                        {"hostname", T::kString},
                        {"interfaceName", T::kString},
                        {"rxBytesPerSecond", T::kDouble},
                        {"txBytesPerSecond", T::kDouble},
                        {"rxPacketsPerSecond", T::kDouble},
                        {"txPacketsPerSecond", T::kDouble},
                        {"rxBytesTotal", T::kInt64},
                        {"txBytesTotal", T::kInt64}}},
          RecordSchema{"sonde.record.system.DiskIoRecord",
                       {{"timestamp", T::kInt64},
                        {"hostname", T::kString},
                        {"deviceName", T::kString},
                        {"readBytesPerSecond", T::kDouble},
                        {"writeBytesPerSecond", T::kDouble},
                        {"readsPerSecond", T::kDouble},
                        {"writesPerSecond", T::kDouble},
                        {"ioTimeFraction", T::kDouble}}},
          // The monitor's own health at the end of a log (docs/formats/native.md):
          // what real programs did to the probes' bookkeeping.
          RecordSchema{"sonde.record.monitor.MonitorHealthRecord",
                       {{"timestamp", T::kInt64},
                        {"hostname", T::kString},
                        {"pid", T::kInt32},
                        {"unwoundFrames", T::kInt64},
                        {"unmatchedExits", T::kInt64},
                        {"signalLostEvents", T::kInt64},
                        {"writerStalls", T::kInt64},
                        {"blockedWaitNs", T::kInt64}}}};
}

}  // namespace

std::span<const RecordSchema* const> system_schemas() {
  // Never destroyed: the writer thread may use them during exit.
  static const std::array<RecordSchema, 5>& schemas =
      *new std::array<RecordSchema, 5>(make_schemas());
  static const std::array<const RecordSchema*, 5> pointers = {&schemas[0], &schemas[1], &schemas[2],
                                                              &schemas[3], &schemas[4]};
  return pointers;
}

}  // namespace sonde::format
