#include "monitor/samplers/make_samplers.hpp"

#include <algorithm>

#include "monitor/samplers/cpu_sampler.hpp"
#include "monitor/samplers/disk_sampler.hpp"
#include "monitor/samplers/memory_sampler.hpp"
#include "monitor/samplers/network_sampler.hpp"
#include "monitor/samplers/proc_text.hpp"
#include "monitor/samplers/process_sampler.hpp"

namespace sonde::monitor::samplers {
namespace {

std::unique_ptr<Sampler> create(std::string_view name, const std::string& hostname,
                                const std::string& proc_root) {
  if (name == "cpu") return std::make_unique<CpuSampler>(hostname, proc_root);
  if (name == "memory") return std::make_unique<MemorySampler>(hostname, proc_root);
  if (name == "process") return std::make_unique<ProcessSampler>(hostname, proc_root);
  if (name == "network") return std::make_unique<NetworkSampler>(hostname, proc_root);
  if (name == "disk") return std::make_unique<DiskSampler>(hostname, proc_root);
  return nullptr;
}

bool is_known(std::string_view name) {
  return std::find(std::begin(kSamplerNames), std::end(kSamplerNames), name) !=
         std::end(kSamplerNames);
}

}  // namespace

std::vector<std::unique_ptr<Sampler>> make_samplers(const std::vector<std::string>& names,
                                                    std::string hostname, std::string* error,
                                                    const std::string& proc_root) {
  // Resolve every name first, so that a typo anywhere in the list creates
  // nothing rather than a surprising subset.
  std::vector<std::string_view> wanted;
  auto want = [&](std::string_view n) {
    if (std::find(wanted.begin(), wanted.end(), n) == wanted.end()) wanted.push_back(n);
  };
  for (const std::string& raw : names) {
    const std::string_view n = trim(raw);
    if (n.empty()) continue;
    if (n == "all") {
      for (std::string_view each : kSamplerNames) want(each);
    } else if (is_known(n)) {
      want(n);
    } else {
      if (error != nullptr) {
        *error = "unknown sampler '" + std::string(n) + "' (known:";
        for (std::string_view each : kSamplerNames) *error += " " + std::string(each) + ",";
        *error += " all)";
      }
      return {};
    }
  }
  std::vector<std::unique_ptr<Sampler>> samplers;
  for (std::string_view n : wanted) samplers.push_back(create(n, hostname, proc_root));
  return samplers;
}

}  // namespace sonde::monitor::samplers
