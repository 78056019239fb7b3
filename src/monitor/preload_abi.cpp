// libsonde's side of the internal ABI with the preload library
// (preload_abi.hpp): exported wrappers around what the interposers need.
// The exception notes are in exceptions.cpp, sonde_internal_longjmp in
// probes.cpp.
#include "monitor/preload_abi.hpp"

#include "monitor/controller.hpp"
#include "monitor/diagnostic_records.hpp"

using namespace sonde::monitor;

extern "C" {

SONDE_INTERNAL bool sonde_internal_diagnostics_accepting(void) { return diagnostics_accepting(); }

SONDE_INTERNAL void sonde_internal_trace_position(TracePosition* out) {
  *out = current_trace_position();
}

SONDE_INTERNAL void sonde_internal_emit_diagnostic(DiagnosticRecord* r) { emit_diagnostic(*r); }

SONDE_INTERNAL int sonde_internal_before_code_unload(uint64_t begin, uint64_t end) {
  return before_code_unload(begin, end) ? 1 : 0;
}

SONDE_INTERNAL void sonde_internal_before_immediate_exit(void) { close_before_immediate_exit(); }

}  // extern "C"
