#include "diagnose/engine/cpu_list.hpp"

#include <algorithm>
#include <stdexcept>

namespace sonde::diagnose::engine {
namespace {

constexpr int kMaxCpu = 1023;  // CPU_SETSIZE

int cpu_number(const std::string& text, const std::string& whole) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 4)
    throw std::invalid_argument("'" + whole + "' is not a CPU list such as \"0-1,3\"");
  const int n = std::stoi(text);
  if (n > kMaxCpu) throw std::invalid_argument("CPU " + text + " is out of range");
  return n;
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      cpus.push_back(cpu_number(item, text));
    } else {
      const int first = cpu_number(item.substr(0, dash), text);
      const int last = cpu_number(item.substr(dash + 1), text);
      if (last < first) throw std::invalid_argument("'" + item + "' is a descending range");
      for (int c = first; c <= last; ++c) cpus.push_back(c);
    }
    at = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

}  // namespace sonde::diagnose::engine
