// Monitoring lifecycle and the probes' slow paths: start-up from the
// configuration, thread registration, buffer hand-off, the writer thread,
// exit, fatal signals and fork.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "monitor/config.hpp"

namespace sonde::monitor {

// Starts monitoring once (thread-safe); later calls return at once.
void ensure_started();
void shutdown_monitoring();
// Hands every recorded event to the writer and waits (bounded) until it is
// written; false if monitoring is off, on the writer thread, or on timeout.
bool flush_now();
// Code in [begin, end) is about to be unmapped (dlclose): flushes, so its
// addresses are resolved while still mapped, then makes the writer resolve
// addresses in that range anew (another library may be loaded there).
bool before_code_unload(uint64_t begin, uint64_t end);
// The process is about to end without atexit (_exit, _Exit): writes
// everything and closes the log, bounded by crash_flush_timeout_ms.
// Async-signal-safe; does nothing in a vfork child.
void close_before_immediate_exit();

const Config& current_config();
uint32_t current_thread_index();

// Adaptive monitoring (patterns.hpp): decided once per operation per generation.
bool operation_monitored(std::string_view name);
// `before_recording`: from start(), before any probe records.
std::string set_patterns(std::string_view text, bool before_recording = false);
// Manual probes compare their descriptor's state byte with this tag
// (enabled) and tag + 1 (disabled); a pattern change moves the tag on.
extern std::atomic<uint8_t> g_op_tag;
inline uint8_t op_enabled_tag() { return g_op_tag.load(std::memory_order_relaxed); }
inline uint8_t op_disabled_tag() { return static_cast<uint8_t>(op_enabled_tag() + 1); }

struct Totals {
  uint64_t recorded = 0;  // events that reached the writer
  uint64_t written = 0;   // events the writer stored
  uint64_t dropped = 0;   // events lost (drop policy, write errors, shadow-stack limit)
  uint64_t buffers = 0;
  uint64_t write_errors = 0;
};
Totals current_totals();

}  // namespace sonde::monitor
