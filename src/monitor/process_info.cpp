#include "monitor/process_info.hpp"

#include <limits.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace sonde::monitor {

ProcessInfo describe_process(const Config& config) {
  ProcessInfo p;
  p.pid = getpid();
  p.parent_pid = getppid();
  char buf[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) p.executable.assign(buf, static_cast<size_t>(n));
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::stringstream ss;
  ss << cmdline.rdbuf();
  p.command_line = ss.str();
  for (char& c : p.command_line) {
    if (c == '\0') c = ' ';
  }
  while (!p.command_line.empty() && p.command_line.back() == ' ') p.command_line.pop_back();
  if (!config.hostname.empty()) {
    p.hostname = config.hostname;
  } else {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    p.hostname = host;
  }
  if (!config.application.empty()) {
    p.application = config.application;
  } else {
    size_t slash = p.executable.rfind('/');
    p.application = slash == std::string::npos ? p.executable : p.executable.substr(slash + 1);
    if (p.application.empty()) p.application = "program";
  }
  p.timer = timer_name();
  p.start_epoch_ns = epoch_ns_now();
  return p;
}

}  // namespace sonde::monitor
