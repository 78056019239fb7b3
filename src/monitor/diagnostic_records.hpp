// Diagnostic records from the interposition probes (interpose_*.cpp): lock
// waits, database calls, message sends, each tied to the probing thread's
// trace position (trace id + order index of its last flow event).
//
// A probe fills a DiagnosticRecord on its own thread and hands it to a
// bounded lock-free queue; the writer thread drains the queue, turns the
// entries into format::Records (resolving operation names there) and
// writes them. Nothing here blocks or takes a lock; a full queue drops the
// record and counts it, and the count reaches the log as a loss.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "monitor/config.hpp"
#include "monitor/probe_busy.hpp"

namespace sonde::monitor {

class WriterCore;

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
extern ProbeSwitches g_probe_switches;

// Start-up (controller, before probes run): allocates the queue and applies
// the probe_* keys. Returns "" or an error naming the key.
std::string start_diagnostics(const Config& config);
void apply_probe_switches(const Config& config);

// The calling thread's trace position (probing thread only).
TracePosition current_trace_position();
// True when records are wanted now: monitoring is on and the queue exists.
bool diagnostics_accepting();
// Hands `r` to the writer; takes ownership of r.text. Never blocks.
void emit_diagnostic(DiagnosticRecord& r);

// Writer thread: writes every queued record, and the count of dropped ones
// as a loss. Called with the writer core's lock held.
void drain_diagnostics(WriterCore& core);
// Writer thread: re-reads probes_file when it changed.
void poll_probes_file();
// In a forked child: forgets records queued by threads that do not exist there.
void diagnostics_after_fork_child();

// Records emitted and dropped since start (for tests and the summary).
uint64_t diagnostics_emitted();
uint64_t diagnostics_dropped();

}  // namespace sonde::monitor
