// The machine a `sonde bench` run measured: what a result needs next to it
// to be comparable (CPU, cores, kernel, compiler and flags, clock source,
// whether the TSC is invariant).
#pragma once

#include <nlohmann/json.hpp>

namespace sonde::cli::bench {

nlohmann::json describe_machine();

}  // namespace sonde::cli::bench
