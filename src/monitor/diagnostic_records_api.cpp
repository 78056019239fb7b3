// The public side of the diagnostic records (include/sonde/records.h):
// records a program reports itself, and which probes are on.
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "monitor/clock.hpp"
#include "monitor/diagnostic_records.hpp"
#include "sonde/records.h"

namespace sonde::monitor {
namespace {

bool wanted(const std::atomic<uint8_t>& probe) {
  return probe.load(std::memory_order_relaxed) != 0 && t_probe_busy == 0 && diagnostics_accepting();
}

// Copies `parts` into one malloc'd '\0'-separated block for r.text.
bool set_text(DiagnosticRecord& r, std::initializer_list<std::string_view> parts) {
  size_t size = 0;
  for (std::string_view p : parts) size += p.size() + 1;
  r.text = static_cast<char*>(std::malloc(size));
  if (r.text == nullptr) return false;
  char* out = r.text;
  for (std::string_view p : parts) {
    std::memcpy(out, p.data(), p.size());
    out[p.size()] = '\0';
    out += p.size() + 1;
  }
  r.text_size = static_cast<uint32_t>(size);
  return true;
}

int64_t start_of(int64_t duration_ns) {
  int64_t now = epoch_ns_now();
  return duration_ns > 0 ? now - duration_ns : now;
}

}  // namespace
}  // namespace sonde::monitor

using namespace sonde::monitor;

extern "C" SONDE_API void sonde_record_message_send(const char* destination, int64_t bytes,
                                                    int64_t duration_ns) {
  if (!wanted(g_probe_switches.messaging)) return;
  ProbeBusy busy;
  DiagnosticRecord r;
  r.kind = DiagnosticKind::kMessageSend;
  r.timestamp = start_of(duration_ns);
  r.position = current_trace_position();
  r.value0 = duration_ns < 0 ? -1 : duration_ns;
  r.value1 = bytes;
  if (!set_text(r, {destination != nullptr ? destination : ""})) return;
  emit_diagnostic(r);
}

extern "C" SONDE_API void sonde_record_database_call(const char* sql, int64_t duration_ns) {
  if (!wanted(g_probe_switches.database)) return;
  ProbeBusy busy;
  DiagnosticRecord r;
  r.kind = DiagnosticKind::kDatabaseCall;
  r.timestamp = start_of(duration_ns);
  r.position = current_trace_position();
  r.value0 = duration_ns < 0 ? -1 : duration_ns;
  r.value1 = 0;  // not known to be prepared
  std::string_view text = sql != nullptr ? sql : "";
  // sql, bound sql, url, product, version: only the statement is known.
  if (!set_text(r, {text, text, "", "", ""})) return;
  emit_diagnostic(r);
}

extern "C" SONDE_API int sonde_probe_enabled(const char* name) {
  std::string_view n = name != nullptr ? name : "";
  if (n == "lock_wait") return g_probe_switches.lock_wait.load() != 0 ? 1 : 0;
  if (n == "database") return g_probe_switches.database.load() != 0 ? 1 : 0;
  if (n == "messaging") return g_probe_switches.messaging.load() != 0 ? 1 : 0;
  return -1;
}
