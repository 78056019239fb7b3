#include "monitor/samplers/sampler.hpp"

#include <utility>

namespace sonde::monitor::samplers {

Sampler::Sampler(std::string hostname, std::string proc_root)
    : hostname_(strings_.intern(hostname)), proc_root_(std::move(proc_root)) {
  // "/proc/" and "/proc" must give the same paths.
  while (proc_root_.size() > 1 && proc_root_.back() == '/') proc_root_.pop_back();
}

std::string Sampler::path(std::string_view relative) const {
  std::string p = proc_root_;
  p += '/';
  p += relative;
  return p;
}

void Sampler::add_error(std::string_view message) noexcept {
  try {
    if (!last_error_.empty()) last_error_ += "; ";
    last_error_ += name();
    last_error_ += ": ";
    last_error_ += message;
  } catch (...) {
    // Out of memory while reporting a problem: the record is already dropped,
    // and there is nothing better to do than to leave the message short.
  }
}

}  // namespace sonde::monitor::samplers
