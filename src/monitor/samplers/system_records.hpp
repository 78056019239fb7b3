// Class names of sonde's own sampler records. The schemas themselves are
// defined in format/builtin_schemas_system.cpp; a test checks the two agree.
#pragma once

#include <string_view>

namespace sonde::monitor::samplers::system_class {
inline constexpr std::string_view kProcessCpu = "sonde.record.system.ProcessCpuRecord";
inline constexpr std::string_view kProcessMemory = "sonde.record.system.ProcessMemoryRecord";
inline constexpr std::string_view kNetworkInterface = "sonde.record.system.NetworkInterfaceRecord";
inline constexpr std::string_view kDiskIo = "sonde.record.system.DiskIoRecord";
}  // namespace sonde::monitor::samplers::system_class
