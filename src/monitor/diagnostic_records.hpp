// Diagnostic records from the interposition probes (the preload library,
// src/monitor/preload) and the program itself (records.h): lock waits,
// database calls, message sends, each tied to the probing thread's trace
// position (trace id + order index of its last flow event).
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
#include "monitor/preload_abi.hpp"
#include "monitor/probe_busy.hpp"

namespace sonde::monitor {

class WriterCore;

// DiagnosticKind, TracePosition, DiagnosticRecord, ProbeSwitches and
// g_probe_switches are in preload_abi.hpp: the preload library's
// interposers fill the records and read the switches too.

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
