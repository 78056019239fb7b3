// The probe entry points: the C API, the C++ exception hook and the
// -finstrument-functions hooks. All of them funnel into probe_path.hpp.
#include <cxxabi.h>
#include <dlfcn.h>

#include <cstring>
#include <exception>
#include <typeinfo>

#include "monitor/callsite_patch.hpp"
#include "monitor/controller.hpp"
#include "monitor/flight/flight_recorder.hpp"
#include "monitor/function_filter.hpp"
#include "monitor/probe_path.hpp"
#include "monitor/registry.hpp"
#include "sonde/sonde.h"
#include "sonde/sonde.hpp"

using namespace sonde::monitor;

namespace {

inline uint64_t op_id(const sonde_op* op) { return __atomic_load_n(&op->id, __ATOMIC_RELAXED); }

// The probed function's stack pointer at the probe call: the canonical frame
// address of the (never inlined) entry point. Frames left by a longjmp are
// told apart by it (probe_slow.cpp).
#define SONDE_CALLER_SP() reinterpret_cast<uint64_t>(__builtin_dwarf_cfa())

[[gnu::noinline]] bool manual_op_monitored_slow(sonde_op* op) {
  ensure_started();
  if (g_mode.load(std::memory_order_relaxed) != kModeOn) return false;
  register_operation(op);
  return __atomic_load_n(&op->state, __ATOMIC_ACQUIRE) == op_enabled_tag();
}

// The two tags are re-read per call: a pattern reload changes them, which
// sends every descriptor back through registration once.
inline bool manual_op_monitored(sonde_op* op) {
  // Acquire pairs with register_operation's release: seeing the tag means
  // seeing the id written before it (a plain load on x86).
  uint8_t s = __atomic_load_n(&op->state, __ATOMIC_ACQUIRE);
  uint8_t on = op_enabled_tag();
  if (s == on) [[likely]]
    return true;
  if (s == on + 1) return false;
  return manual_op_monitored_slow(op);
}

}  // namespace

extern "C" {

namespace {

// True if probes should run; starts monitoring on the very first probe
// (before libsonde's own constructor, e.g. from another library's).
[[gnu::always_inline]] inline bool probes_on() {
  uint8_t mode = g_mode.load(std::memory_order_relaxed);
  if (mode == kModeOn) [[likely]]
    return true;
  if (mode != kModeUnstarted) return false;
  ensure_started();
  return g_mode.load(std::memory_order_relaxed) == kModeOn;
}

}  // namespace

SONDE_API void sonde_begin(sonde_op* op) {
  if (!probes_on()) return;
  if (!manual_op_monitored(op)) return;
  probe_enter(RawKind::kEnterOp, op_id(op), op_id(op) | kOpTag, SONDE_CALLER_SP());
}

}  // extern "C"

namespace sonde::detail {

// The C++ scope's begin: tells the scope whether its end must be recorded,
// so that a disabled scope skips the end call and the exception check.
SONDE_API uint64_t scope_begin(sonde_op* op) noexcept {
  if (!probes_on() || !manual_op_monitored(op)) return 0;
  probe_enter(RawKind::kEnterOp, op_id(op), op_id(op) | kOpTag, SONDE_CALLER_SP());
  return (t_state.throws << 1) | 1;
}

SONDE_API void scope_end(sonde_op* op, uint64_t token) noexcept {
  if (g_mode.load(std::memory_order_relaxed) == kModeShutdown) return;
  // Only a throw since the scope began can make this exit a failure; the
  // costly std::uncaught_exceptions() check runs only then.
  if ((t_state.throws << 1 | 1) != token && std::uncaught_exceptions() > 0) {
    sonde_failed(op, current_exception_cause());
    return;
  }
  probe_exit(RawKind::kExitOp, op_id(op), op_id(op) | kOpTag, SONDE_CALLER_SP());
}

}  // namespace sonde::detail

extern "C" {

SONDE_API void sonde_end(sonde_op* op) {
  if (g_mode.load(std::memory_order_relaxed) == kModeShutdown) return;
  // A disabled operation's begin recorded nothing: not an unmatched exit.
  if (__atomic_load_n(&op->state, __ATOMIC_RELAXED) != op_enabled_tag()) return;
  probe_exit(RawKind::kExitOp, op_id(op), op_id(op) | kOpTag, SONDE_CALLER_SP());
}

SONDE_API void sonde_failed(sonde_op* op, const char* cause) {
  if (g_mode.load(std::memory_order_relaxed) == kModeShutdown) return;
  ThreadState& t = t_state;
  // Intern only when this frame is really open: interning takes a lock.
  if (t.depth == 0 || (t.shadow[t.depth - 1].key & ~kDroppedTag) != (op_id(op) | kOpTag)) return;
  probe_exit(RawKind::kFailOp, op_id(op), op_id(op) | kOpTag, SONDE_CALLER_SP(),
             intern_cause(cause));
}

// Called by the preload library's longjmp/siglongjmp interposers just before
// the jump: the frames between here and the setjmp are left without exits.
// A jump out of a signal handler that interrupted a probe (status "in
// probe") abandons that probe: the thread must not stay "in probe" for ever,
// or every later probe would count itself lost.
SONDE_API void sonde_internal_longjmp(void) {
  ThreadState& t = t_state;
  if (t.status == kThreadActive || t.status == kThreadInProbe) t.status = kThreadResync;
}

SONDE_API int sonde_is_enabled(void) {
  ensure_started();
  return g_mode.load() == kModeOn ? 1 : 0;
}

SONDE_API void sonde_set_enabled(int enabled) {
  ensure_started();
  uint8_t m = g_mode.load();
  if (m == kModeShutdown) return;
  // Off only stops new enters; open frames still record their exits.
  set_mode(enabled ? kModeOn : kModeOff);
}

SONDE_API int sonde_set_patterns(const char* lines, char* error, size_t error_size) {
  ensure_started();
  std::string err = set_patterns(lines != nullptr ? lines : "");
  if (err.empty()) return 0;
  if (error != nullptr && error_size > 0) {
    std::strncpy(error, err.c_str(), error_size - 1);
    error[error_size - 1] = '\0';
  }
  return -1;
}

SONDE_API int sonde_flush(void) { return flush_now() ? 0 : -1; }
SONDE_API int sonde_snapshot(const char* reason) {
  ensure_started();
  if (g_mode.load() != kModeOn || !current_config().flight) return -1;
  flight::FlightRecorder::request_snapshot(reason, false);
  return 0;
}
SONDE_API void sonde_shutdown(void) { shutdown_monitoring(); }

SONDE_API sonde_stats sonde_get_stats(void) {
  Totals t = current_totals();
  sonde_stats s{};
  s.events_recorded = t.recorded;
  s.events_written = t.written;
  s.events_dropped = t.dropped;
  s.buffers_written = t.buffers;
  s.write_errors = t.write_errors;
  return s;
}

// -finstrument-functions hooks. glibc defines no-op versions, so programs
// built with the flag link without sonde and pick these up via LD_PRELOAD.
[[gnu::no_instrument_function]] SONDE_API void __cyg_profile_func_enter(void* fn, void* /*site*/) {
  if (!probes_on()) return;
  auto address = reinterpret_cast<uint64_t>(fn);
  const FunctionFilter* filter = g_function_filter.load(std::memory_order_acquire);
  if (filter != nullptr && !filter->allows(address)) [[unlikely]] {
    // Excluded (patterns, culling): its hook call sites become NOPs.
    request_callsite_patch(address, reinterpret_cast<uint64_t>(__builtin_return_address(0)));
    return;
  }
  probe_enter(RawKind::kEnterFn, address, address, SONDE_CALLER_SP());
}

[[gnu::no_instrument_function]] SONDE_API void __cyg_profile_func_exit(void* fn, void* /*site*/) {
  if (g_mode.load(std::memory_order_relaxed) == kModeShutdown) return;
  auto address = reinterpret_cast<uint64_t>(fn);
  // The return address lets an excluded function's exit hook call be
  // patched out like its enter's; only probe_exit's slow paths read it.
  probe_exit(RawKind::kExitFn, address, address, SONDE_CALLER_SP(), 0,
             reinterpret_cast<uint64_t>(__builtin_return_address(0)));
}

}  // extern "C"

// Starts monitoring when libsonde is loaded (linked or LD_PRELOADed).
[[gnu::constructor]] static void sonde_library_loaded() { ensure_started(); }
[[gnu::destructor]] static void sonde_library_unloaded() { shutdown_monitoring(); }
