#include "diagnose/engine/port_owner.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace sonde::diagnose::engine {
namespace {

// Socket inodes in LISTEN state (0A) on `port`, from a /proc/net/tcp file.
void listening_inodes(const char* table, int port, std::set<unsigned long>& inodes) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout;
    unsigned long inode = 0;
    if (!(f >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode))
      continue;
    const size_t colon = local.rfind(':');
    if (colon == std::string::npos || state != "0A") continue;
    if (std::strtol(local.c_str() + colon + 1, nullptr, 16) == port) inodes.insert(inode);
  }
}

struct ProcStat {
  std::string comm;
  long ppid = -1, pgrp = -1;
  unsigned long long start = 0;  // clock ticks after boot
};

std::optional<ProcStat> read_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  ProcStat s;
  s.comm = text.substr(open + 1, close - open - 1);
  // After "comm)": state ppid pgrp session tty_nr tpgid flags minflt
  // cminflt majflt cmajflt utime stime cutime cstime priority nice
  // num_threads itrealvalue starttime (field 22).
  std::istringstream f(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && (f >> field); ++i) {
    if (i == 4) s.ppid = std::atol(field.c_str());
    if (i == 5) s.pgrp = std::atol(field.c_str());
    if (i == 22) s.start = std::strtoull(field.c_str(), nullptr, 10);
  }
  return s;
}

bool holds_any(pid_t pid, const std::set<unsigned long>& inodes) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  bool found = false;
  char target[64];
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const ssize_t n = readlink((dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    unsigned long inode = 0;
    if (std::sscanf(target, "socket:[%lu]", &inode) == 1 && inodes.count(inode) != 0) {
      found = true;
      break;
    }
  }
  closedir(d);
  return found;
}

// Whether `owner` is the SUT's: in its process group, below it, or a
// daemon started after it (detached, so its parent is init or a subreaper
// that is not another of our processes' ancestors).
bool belongs_to_sut(pid_t owner, const ProcStat& s, pid_t sut, const ProcStat& sut_stat) {
  if (s.pgrp == sut) return true;
  long pid = owner;
  ProcStat at = s;
  for (int depth = 0; depth < 64 && pid > 1; ++depth) {
    if (pid == sut) return true;
    pid = at.ppid;
    if (pid <= 1) break;
    const std::optional<ProcStat> up = read_stat(static_cast<pid_t>(pid));
    if (!up) break;
    at = *up;
  }
  return s.ppid <= 1 && s.start >= sut_stat.start;
}

}  // namespace

PortListeners listeners_on(int port, pid_t sut) {
  PortListeners found;
  std::set<unsigned long> inodes;
  listening_inodes("/proc/net/tcp", port, inodes);
  listening_inodes("/proc/net/tcp6", port, inodes);
  const std::optional<ProcStat> mine = read_stat(sut);
  if (inodes.empty() || !mine) return found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || !holds_any(static_cast<pid_t>(pid), inodes)) continue;
    const std::optional<ProcStat> s = read_stat(static_cast<pid_t>(pid));
    if (!s) continue;
    if (belongs_to_sut(static_cast<pid_t>(pid), *s, sut, *mine)) {
      found.sut = true;
    } else if (!found.foreign) {
      found.foreign = "pid " + std::to_string(pid) + " (" + s->comm + ")";
    }
  }
  closedir(proc);
  return found;
}

}  // namespace sonde::diagnose::engine
