// Every function symbol of every module loaded in this process, with its
// run-time address: what per-function decisions (patterns, trace_start,
// culling) are computed from, off the hot path.
#pragma once

#include <cstdint>
#include <functional>

namespace sonde::monitor {

// Calls `visit(address, mangled_name)` for each function symbol (STT_FUNC,
// non-zero address) of the modules mapped now. Returns false if the
// process's modules could not be read.
bool for_each_function_symbol(const std::function<void(uint64_t, const char*)>& visit);

}  // namespace sonde::monitor
