// The internal ABI between libsonde and libsonde-preload (src/monitor/preload,
// docs/probes.md "Two libraries"). libsonde defines no library function of
// anyone else's: the interposers of pthread_mutex_lock, SQLite, libpq,
// __cxa_throw/__cxa_rethrow/std::rethrow_exception, dlclose and longjmp live
// in the preload library, which links libsonde and reaches its internals
// only through the names declared here. Everything here is exported from
// libsonde (built with hidden visibility) under a `sonde_internal_` name;
// nothing else of libsonde's internals is visible to the preload library.
// Both libraries are built from the same sources and installed together, so
// the C++ types below are shared as they are, not versioned.
#pragma once

#include <atomic>
#include <cstdint>
#include <typeinfo>

#define SONDE_INTERNAL __attribute__((visibility("default")))

namespace sonde::monitor {

enum class DiagnosticKind : uint8_t { kLockWait = 1, kDatabaseCall = 2, kMessageSend = 3 };

struct TracePosition {
  int64_t trace_id = -1;
  int32_t order_index = -1;
  uint64_t operation_key = 0;  // innermost open frame's shadow key; 0: none
};

struct DiagnosticRecord {
  DiagnosticKind kind = DiagnosticKind::kLockWait;
  int64_t timestamp = 0;  // epoch ns
  TracePosition position;
  // Lock wait: wait ns, hold ns (-1), lock address.
  // Database call: duration ns, prepared (0/1), unused.
  // Message send: duration ns, bytes, unused.
  int64_t value0 = 0;
  int64_t value1 = 0;
  uint64_t address = 0;
  // malloc'd strings separated by '\0' (database call: sql, bound sql, db
  // url, product version; message send: destination); owned by the queue
  // once emitted. May be null.
  char* text = nullptr;
  uint32_t text_size = 0;
};

// Which probes are on. Read by the interposers on every call (one relaxed
// load), written at start-up and by probes_file reloads.
struct ProbeSwitches {
  std::atomic<uint8_t> lock_wait{0};
  std::atomic<uint8_t> database{0};
  std::atomic<uint8_t> messaging{0};
  std::atomic<uint64_t> lock_wait_threshold_ns{0};
};

// Data read on the interposers' fast paths, exported as data rather than
// behind calls so that a probe that is off costs one load, as it did when
// the interposers were part of libsonde. The asm labels give libsonde's own
// names their exported C names.
extern ProbeSwitches g_probe_switches __asm__("sonde_internal_probe_switches") SONDE_INTERNAL;
// Set while the probes must not record on this thread (probe_busy.hpp).
// Initial-exec: libsonde is in the static TLS block (it uses initial-exec
// itself), so the preload library reads it with one %fs-relative load.
extern __thread uint8_t t_probe_busy __asm__("sonde_internal_probe_busy")
    __attribute__((tls_model("initial-exec"))) SONDE_INTERNAL;

}  // namespace sonde::monitor

extern "C" {

// ---- Diagnostic records (diagnostic_records.hpp) ----------------------------

// True when records are wanted now: monitoring is on and the queue exists.
SONDE_INTERNAL bool sonde_internal_diagnostics_accepting(void);
// The calling thread's trace position.
SONDE_INTERNAL void sonde_internal_trace_position(sonde::monitor::TracePosition* out);
// Hands `r` to the writer; takes ownership of r->text. Never blocks.
SONDE_INTERNAL void sonde_internal_emit_diagnostic(sonde::monitor::DiagnosticRecord* r);

// ---- Exceptions (exceptions.cpp) --------------------------------------------
// A C++ scope's end tells a failure from a normal exit by the thread's throw
// count, and names it with the last noted cause (probes.cpp).

// A throw while monitoring is on: counts it and notes its cause (the type,
// and what() if it is a std::exception; the name is demangled only when a
// scope asks for it).
SONDE_INTERNAL void sonde_internal_note_throw(void* object, const std::type_info* type);
// A throw while monitoring is off: only counted (so that a scope opened
// before monitoring went off still ends as failed), its cause unknown.
SONDE_INTERNAL void sonde_internal_count_throw(void);

// ---- Unloading code (controller.hpp) ----------------------------------------

// dlclose: code in [begin, end) is about to be unmapped. Returns 1 if the
// recorded addresses were resolved first.
SONDE_INTERNAL int sonde_internal_before_code_unload(uint64_t begin, uint64_t end);

// _exit, _Exit: the log is written and closed before the process ends.
SONDE_INTERNAL void sonde_internal_before_immediate_exit(void);

// ---- longjmp (probes.cpp) ---------------------------------------------------

// Just before a longjmp/siglongjmp: the frames it skips are left without exits.
SONDE_INTERNAL void sonde_internal_longjmp(void);

// ---- Defined by libsonde-preload --------------------------------------------

// Present (dlsym) when the preload library is loaded: libsonde says so on
// stderr when a probe is switched on without it.
SONDE_INTERNAL int sonde_internal_preload_marker(void);

}  // extern "C"
