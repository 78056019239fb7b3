#include "analysis/export/chrome_trace_writer.hpp"

#include <algorithm>
#include <limits>

#include "analysis/export/export_support.hpp"

namespace sonde::analysis {
namespace {

constexpr int64_t kHourNs = 3'600'000'000'000;

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// Nanoseconds as decimal microseconds with exactly three decimals: exact,
// and short enough for a double to read back to the nanosecond.
std::string micros(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string frac = std::to_string(magnitude % 1000);
  frac.insert(0, 3 - frac.size(), '0');
  return (negative ? "-" : "") + std::to_string(magnitude / 1000) + "." + frac;
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, ChromeTraceOptions options)
    : out_(out), options_(std::move(options)), origin_(options_.time_origin_ns) {
  tracks_.on_new_process = [this](int32_t pid, const std::string& host) {
    write_metadata("process_name", pid, pid, host);
  };
  tracks_.on_new_thread = [this](int32_t pid, int32_t tid, const std::string& name) {
    write_metadata("thread_name", pid, tid, name);
  };
}

void ChromeTraceWriter::begin_event() {
  if (!started_) {
    out_ << "{\"traceEvents\":[\n";
    started_ = true;
  }
  if (!first_event_) out_ << ",\n";
  first_event_ = false;
}

void ChromeTraceWriter::write_metadata(const char* name, int32_t pid, int32_t tid,
                                       const std::string& value) {
  begin_event();
  out_ << "{\"name\":\"" << name << "\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
       << ",\"args\":{\"name\":" << json_quote(value) << "}}";
}

void ChromeTraceWriter::on_stitched_trace(const StitchedTrace& stitched) {
  if (finished_ || stitched.parts.empty()) return;
  ++stats_.traces;
  bool any = false;
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const SubTrace& part : stitched.parts) {
    for (const Execution& e : part.trace.executions) {
      first = std::min(first, e.tin);
      any = true;
    }
  }
  if (!any) return;
  if (!origin_) origin_ = floor_div(first, kHourNs) * kHourNs - kHourNs;

  const TraceLayout layout = lay_out_trace(stitched, tracks_, options_.flows);
  stats_.processes = tracks_.processes();
  stats_.threads = tracks_.threads();
  stats_.clamped += layout.clamped;
  const std::vector<TrackNode>& nodes = layout.nodes;
  for (const std::vector<int32_t>& events : layout.per_track) {
    for (int32_t n : events) {
      const TrackNode& node = nodes[n];
      const Execution& e = *node.execution;
      const TrackId track = layout.tracks[node.track];
      begin_event();
      out_ << "{\"name\":" << json_quote(execution_label(e, options_.short_labels))
           << ",\"cat\":\"sonde\",\"ph\":\"X\",\"ts\":" << micros(node.start - *origin_)
           << ",\"dur\":" << micros(node.end - node.start) << ",\"pid\":" << track.pid
           << ",\"tid\":" << track.tid << ",\"args\":{\"trace_id\":\"" << node.trace->trace_id
           << "\",\"eoi\":" << e.eoi << ",\"ess\":" << e.ess
           << ",\"operation\":" << json_quote(e.operation)
           << ",\"component\":" << json_quote(e.component);
      if (stitched.parts.size() > 1) out_ << ",\"part\":" << node.part;
      if (!node.trace->session.empty()) out_ << ",\"session\":" << json_quote(node.trace->session);
      if (e.failed) out_ << ",\"failed\":true,\"cause\":" << json_quote(e.cause);
      if (e.repaired) out_ << ",\"repaired\":true";
      if (node.clamped) out_ << ",\"clamped\":true";
      out_ << "}}";
      ++stats_.complete_events;
    }
  }
  for (const FlowLink& link : layout.flows) {
    write_flow_event('s', next_flow_id_, link.start, layout.tracks[nodes[link.from].track]);
    write_flow_event('f', next_flow_id_, link.end, layout.tracks[nodes[link.to].track]);
    ++next_flow_id_;
    ++stats_.flows;
  }
}

void ChromeTraceWriter::write_flow_event(char phase, uint64_t id, int64_t time, TrackId track) {
  begin_event();
  out_ << "{\"name\":\"context\",\"cat\":\"sonde.flow\",\"ph\":\"" << phase << "\",\"id\":" << id
       << ",\"ts\":" << micros(time - *origin_) << ",\"pid\":" << track.pid
       << ",\"tid\":" << track.tid << (phase == 'f' ? ",\"bp\":\"e\"}" : "}");
}

void ChromeTraceWriter::finish() {
  if (finished_) return;
  finished_ = true;
  if (!started_) out_ << "{\"traceEvents\":[\n";
  out_ << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"sonde\""
       << ",\"time_origin_ns\":\"" << origin_.value_or(0) << "\",\"traces\":\"" << stats_.traces
       << "\"}}\n";
  out_.flush();
}

}  // namespace sonde::analysis
