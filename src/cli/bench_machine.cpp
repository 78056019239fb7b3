#include "cli/bench_machine.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace sonde::cli::bench {
namespace {

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The value of the first "key : value" line of /proc/cpuinfo with this key.
std::string cpuinfo(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + (colon + 1 < line.size() ? 2 : 1));
    }
  }
  return "";
}

bool has_flag(const std::string& flags, const std::string& flag) {
  return (" " + flags + " ").find(" " + flag + " ") != std::string::npos;
}

}  // namespace

nlohmann::json describe_machine() {
  nlohmann::json m;
  m["cpu_model"] = cpuinfo("model name");
  m["cores_online"] = sysconf(_SC_NPROCESSORS_ONLN);
  utsname u{};
  if (uname(&u) == 0) {
    m["kernel"] = std::string(u.sysname) + " " + u.release;
    m["arch"] = u.machine;
  }
  m["clock_source"] =
      first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  const std::string flags = cpuinfo("flags");
  m["tsc_invariant"] = has_flag(flags, "constant_tsc") && has_flag(flags, "nonstop_tsc");
  // The benchmark binaries are built by this build's compiler with these
  // flags (bench/moobench/CMakeLists.txt).
  m["compiler"] = std::string("g++ ") + __VERSION__;
  m["flags"] = "-O2 (monitored application and driver); sonde " SONDE_BENCH_BUILD_TYPE " build";
  m["load_average"] = first_line("/proc/loadavg");
  return m;
}

}  // namespace sonde::cli::bench
