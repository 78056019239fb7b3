// Builds the samplers named in the `samplers` configuration key.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "monitor/samplers/sampler.hpp"

namespace sonde::monitor::samplers {

// Every sampler name, in the order "all" creates them.
inline constexpr std::string_view kSamplerNames[] = {"cpu", "memory", "process", "network", "disk"};

// Accepts "cpu", "memory", "process", "network", "disk" and "all" (every one of
// them). Surrounding blanks and empty names are ignored, and a sampler named
// twice (or by "all" and by name) is created once, in order of first mention.
// An unknown name returns an empty vector and sets *error (if not null) to
// "unknown sampler 'x' (known: cpu, memory, process, network, disk, all)".
std::vector<std::unique_ptr<Sampler>> make_samplers(const std::vector<std::string>& names,
                                                    std::string hostname, std::string* error,
                                                    const std::string& proc_root = "/proc");

}  // namespace sonde::monitor::samplers
