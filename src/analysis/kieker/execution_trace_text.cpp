#include "analysis/kieker/execution_trace_text.hpp"

#include <cstdio>
#include <ctime>

#include "analysis/text/utf8_scan.hpp"

namespace sonde::analysis {
namespace {

constexpr const char* kWeekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void append_hex_escape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

}  // namespace

std::string kieker_utc_date(int64_t ns) {
  // Java divides to milliseconds (truncating), then the calendar floors.
  const int64_t millis = ns / 1'000'000;
  const int64_t seconds = floor_div(millis, 1000);
  const int64_t ms = millis - seconds * 1000;
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "?";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s, %d %s %04d %02d:%02d:%02d.%03d +0000 (UTC)",
                kWeekdays[tm.tm_wday], tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

std::string text_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      append_hex_escape(out, c);
    } else if (c >= 0x80) {
      const size_t len = utf8_sequence_length(text, i);
      if (len == 0) {
        append_hex_escape(out, c);
      } else {
        out.append(text.substr(i, len));
        i += len;
        continue;
      }
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

std::string execution_text(const KiekerTrace& trace, size_t index, const KiekerSystemModel& model) {
  const KiekerExecution& k = trace.executions[index];
  const Execution& e = *k.execution;
  std::string out = std::to_string(trace.trace->trace_id) + "[" + std::to_string(e.eoi) + "," +
                    std::to_string(e.ess) + "] " + std::to_string(e.tin) + "-" +
                    std::to_string(e.tout) + " ";
  out += text_escape(model.container_name(k.ids.container));
  out += "::@" + std::to_string(k.ids.assembly) + ":";
  out += text_escape(model.component_type(k.ids.assembly));
  out += "." + text_escape(kieker_operation_name(e.operation)) + " ";
  out += text_escape(trace.trace->session);
  if (k.assumed) out += " (assumed)";
  return out;
}

std::string execution_trace_text(const KiekerTrace& trace, const KiekerSystemModel& model) {
  const Trace& t = *trace.trace;
  const int64_t min_tin = t.executions.empty() ? -1 : t.start_time();
  const int64_t max_tout = t.executions.empty() ? -1 : t.end_time();
  std::string out = "TraceId " + std::to_string(t.trace_id);
  out += " (minTin=" + std::to_string(min_tin) + " (" + kieker_utc_date(min_tin) + ")";
  out += "; maxTout=" + std::to_string(max_tout) + " (" + kieker_utc_date(max_tout) + ")";
  out += "; maxEss=" + std::to_string(trace.max_ess) + "):\n";
  for (size_t i = 0; i < trace.executions.size(); ++i) {
    out += "<" + execution_text(trace, i, model) + ">\n";
  }
  return out;
}

}  // namespace sonde::analysis
