#include "analysis/export/perfetto_trace_writer.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "analysis/export/export_support.hpp"
#include "analysis/text/utf8_scan.hpp"

namespace sonde::analysis {
namespace {

// Field numbers of Perfetto's protos (docs/formats/perfetto.md).
namespace trace {
constexpr uint32_t kPacket = 1;
}
namespace packet {
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kTrustedPacketSequenceId = 10;
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint64_t kIncrementalStateCleared = 1;
constexpr uint64_t kNeedsIncrementalState = 2;
constexpr uint64_t kSequenceId = 1;
}  // namespace packet
namespace track_descriptor {
constexpr uint32_t kUuid = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kProcess = 3;
constexpr uint32_t kThread = 4;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kCounter = 8;
}  // namespace track_descriptor
namespace process_descriptor {
constexpr uint32_t kPid = 1;
constexpr uint32_t kProcessName = 6;
}  // namespace process_descriptor
namespace thread_descriptor {
constexpr uint32_t kPid = 1;
constexpr uint32_t kTid = 2;
constexpr uint32_t kThreadName = 5;
}  // namespace thread_descriptor
namespace track_event {
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kTrackUuid = 11;
constexpr uint32_t kDoubleCounterValue = 44;
constexpr uint32_t kFlowIds = 47;
constexpr uint32_t kTerminatingFlowIds = 48;
constexpr uint64_t kSliceBegin = 1;
constexpr uint64_t kSliceEnd = 2;
constexpr uint64_t kInstant = 3;
constexpr uint64_t kCounter = 4;
}  // namespace track_event
namespace interned_data {
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kDebugAnnotationNames = 3;
constexpr uint32_t kDebugAnnotationStringValues = 29;
}  // namespace interned_data
namespace debug_annotation {
constexpr uint32_t kNameIid = 1;
constexpr uint32_t kBoolValue = 2;
constexpr uint32_t kIntValue = 4;
constexpr uint32_t kStringValueIid = 17;
}  // namespace debug_annotation
// Interned entries (EventName, EventCategory, DebugAnnotationName,
// InternedString) are all {iid = 1, name/str = 2}.
constexpr uint32_t kIid = 1;
constexpr uint32_t kInternedText = 2;

constexpr uint64_t kCategoryIid = 1;  // "sonde"
// Debug annotation names, interned with the first slice.
enum Annotation : uint64_t {
  kTraceId = 1,
  kEoi,
  kEss,
  kOperation,
  kComponent,
  kPart,
  kSession,
  kFailed,
  kCause,
  kRepaired,
  kClamped,
  kLost,
};
constexpr std::array<std::string_view, 12> kAnnotationNames = {
    "trace_id", "eoi",   "ess",      "operation", "component", "part",
    "session",  "failed", "cause",   "repaired",  "clamped",   "lost"};

uint64_t timestamp_of(int64_t ns) { return ns < 0 ? 0 : static_cast<uint64_t>(ns); }

void add_interned(proto::ProtoMessage& interned, uint32_t field, uint64_t iid,
                  std::string_view text, proto::ProtoMessage& scratch) {
  scratch.clear();
  scratch.uint(kIid, iid);
  scratch.text(kInternedText, text);
  interned.message(field, scratch);
}

bool is_sampler_class(std::string_view cls) {
  return cls.starts_with("kieker.common.record.system.") || cls.starts_with("sonde.record.system.");
}

std::string_view simple_name(std::string_view cls) {
  const size_t dot = cls.rfind('.');
  return dot == std::string_view::npos ? cls : cls.substr(dot + 1);
}

}  // namespace

PerfettoTraceWriter::PerfettoTraceWriter(std::ostream& out, PerfettoTraceOptions options)
    : out_(out), options_(options) {
  tracks_.on_new_process = [this](int32_t pid, const std::string& host) {
    write_process_track(pid, host);
  };
  tracks_.on_new_thread = [this](int32_t pid, int32_t tid, const std::string& name) {
    write_thread_track(pid, tid, name);
  };
}

void PerfettoTraceWriter::write_packet(const proto::ProtoMessage& packet) {
  // Trace { repeated TracePacket packet = 1; }: the file is a Trace.
  frame_.clear();
  frame_.length_delimited_header(trace::kPacket, packet.bytes().size());
  out_.write(frame_.bytes().data(), static_cast<std::streamsize>(frame_.bytes().size()));
  out_.write(packet.bytes().data(), static_cast<std::streamsize>(packet.bytes().size()));
  ++stats_.packets;
}

void PerfettoTraceWriter::begin_packet(proto::ProtoMessage& packet, bool interned) {
  packet.clear();
  packet.uint(packet::kTrustedPacketSequenceId, packet::kSequenceId);
  uint64_t flags = interned ? packet::kNeedsIncrementalState : 0;
  if (first_packet_) flags |= packet::kIncrementalStateCleared;
  first_packet_ = false;
  if (flags != 0) packet.uint(packet::kSequenceFlags, flags);
}

void PerfettoTraceWriter::write_process_track(int32_t pid, const std::string& host) {
  begin_packet(packet_, false);
  scratch_.clear();
  scratch_.sint_as_int(process_descriptor::kPid, pid);
  scratch_.text(process_descriptor::kProcessName, to_valid_utf8(host));
  event_.clear();
  event_.uint(track_descriptor::kUuid, perfetto_process_uuid(pid));
  event_.message(track_descriptor::kProcess, scratch_);
  packet_.message(packet::kTrackDescriptor, event_);
  write_packet(packet_);
  ++stats_.processes;
}

void PerfettoTraceWriter::write_thread_track(int32_t pid, int32_t tid, const std::string& name) {
  begin_packet(packet_, false);
  scratch_.clear();
  scratch_.sint_as_int(thread_descriptor::kPid, pid);
  scratch_.sint_as_int(thread_descriptor::kTid, tid);
  scratch_.text(thread_descriptor::kThreadName, to_valid_utf8(name));
  event_.clear();
  event_.uint(track_descriptor::kUuid, perfetto_thread_uuid(tid));
  event_.uint(track_descriptor::kParentUuid, perfetto_process_uuid(pid));
  event_.message(track_descriptor::kThread, scratch_);
  packet_.message(packet::kTrackDescriptor, event_);
  write_packet(packet_);
  ++stats_.threads;
}

uint64_t PerfettoTraceWriter::intern_name(std::string_view name, proto::ProtoMessage& interned) {
  // Looked up by view: a slice whose name is interned allocates nothing.
  auto it = name_iids_.find(name);
  const bool inserted = it == name_iids_.end();
  if (inserted) {
    it = name_iids_.emplace(std::string(name), name_iids_.size() + 1).first;
    add_interned(interned, interned_data::kEventNames, it->second, to_valid_utf8(name), scratch_);
    ++stats_.interned_names;
  }
  return it->second;
}

uint64_t PerfettoTraceWriter::intern_annotation_value(std::string_view value,
                                                      proto::ProtoMessage& interned) {
  auto it = value_iids_.find(value);
  const bool inserted = it == value_iids_.end();
  if (inserted) {
    it = value_iids_.emplace(std::string(value), value_iids_.size() + 1).first;
    add_interned(interned, interned_data::kDebugAnnotationStringValues, it->second,
                 to_valid_utf8(value), scratch_);
  }
  return it->second;
}

void PerfettoTraceWriter::intern_common(proto::ProtoMessage& interned) {
  if (common_interned_) return;
  common_interned_ = true;
  add_interned(interned, interned_data::kEventCategories, kCategoryIid, "sonde", scratch_);
  for (size_t i = 0; i < kAnnotationNames.size(); ++i) {
    add_interned(interned, interned_data::kDebugAnnotationNames, i + 1, kAnnotationNames[i],
                 scratch_);
  }
}

void PerfettoTraceWriter::on_lost_events(const format::LostEvents& lost) {
  if (finished_) return;
  const int32_t pid = tracks_.pid_for(lost.host.empty() ? kUnknownHost : std::string(lost.host));
  const int32_t tid = tracks_.tid_for_thread(pid, lost.thread_id);
  interned_.clear();
  intern_common(interned_);
  event_.clear();
  event_.uint(track_event::kType, track_event::kInstant);
  event_.uint(track_event::kTrackUuid, perfetto_thread_uuid(tid));
  event_.uint(track_event::kCategoryIids, kCategoryIid);
  event_.uint(track_event::kNameIid, intern_name("events lost", interned_));
  annotation_.clear();
  annotation_.uint(debug_annotation::kNameIid, kLost);
  annotation_.sint_as_int(debug_annotation::kIntValue, static_cast<int64_t>(lost.count));
  event_.message(track_event::kDebugAnnotations, annotation_);
  begin_packet(packet_, true);
  packet_.uint(packet::kTimestamp, timestamp_of(lost.time_ns));
  if (!interned_.empty()) packet_.message(packet::kInternedData, interned_);
  packet_.message(packet::kTrackEvent, event_);
  write_packet(packet_);
  ++stats_.loss_markers;
  stats_.events_lost += lost.count;
}

void PerfettoTraceWriter::write_slice_begin(const TrackNode& node, uint64_t track_uuid,
                                            bool multi_part, const std::vector<uint64_t>& flows_out,
                                            uint64_t flow_in) {
  const Execution& e = *node.execution;
  interned_.clear();
  intern_common(interned_);
  const std::string label = execution_label(e, options_.short_labels);
  event_.clear();
  event_.uint(track_event::kType, track_event::kSliceBegin);
  event_.uint(track_event::kTrackUuid, track_uuid);
  event_.uint(track_event::kCategoryIids, kCategoryIid);
  event_.uint(track_event::kNameIid, intern_name(label, interned_));
  auto int_arg = [&](Annotation name, int64_t value) {
    annotation_.clear();
    annotation_.uint(debug_annotation::kNameIid, name);
    annotation_.sint_as_int(debug_annotation::kIntValue, value);
    event_.message(track_event::kDebugAnnotations, annotation_);
  };
  auto flag_arg = [&](Annotation name) {
    annotation_.clear();
    annotation_.uint(debug_annotation::kNameIid, name);
    annotation_.boolean(debug_annotation::kBoolValue, true);
    event_.message(track_event::kDebugAnnotations, annotation_);
  };
  auto text_arg = [&](Annotation name, std::string_view value) {
    const uint64_t iid = intern_annotation_value(value, interned_);
    annotation_.clear();
    annotation_.uint(debug_annotation::kNameIid, name);
    annotation_.uint(debug_annotation::kStringValueIid, iid);
    event_.message(track_event::kDebugAnnotations, annotation_);
  };
  int_arg(kTraceId, node.trace->trace_id);
  int_arg(kEoi, e.eoi);
  int_arg(kEss, e.ess);
  if (label != e.operation) text_arg(kOperation, e.operation);
  if (!e.component.empty()) text_arg(kComponent, e.component);
  if (multi_part) int_arg(kPart, node.part);
  if (!node.trace->session.empty()) text_arg(kSession, node.trace->session);
  if (e.failed) {
    flag_arg(kFailed);
    text_arg(kCause, e.cause);
  }
  if (e.repaired) flag_arg(kRepaired);
  if (node.clamped) flag_arg(kClamped);
  for (uint64_t id : flows_out) event_.fixed64(track_event::kFlowIds, id);
  if (flow_in != 0) event_.fixed64(track_event::kTerminatingFlowIds, flow_in);

  begin_packet(packet_, true);
  packet_.uint(packet::kTimestamp, timestamp_of(node.start));
  if (!interned_.empty()) packet_.message(packet::kInternedData, interned_);
  packet_.message(packet::kTrackEvent, event_);
  write_packet(packet_);
  ++stats_.slices;
}

void PerfettoTraceWriter::write_slice_end(int64_t time, uint64_t track_uuid) {
  event_.clear();
  event_.uint(track_event::kType, track_event::kSliceEnd);
  event_.uint(track_event::kTrackUuid, track_uuid);
  begin_packet(packet_, false);
  packet_.uint(packet::kTimestamp, timestamp_of(time));
  packet_.message(packet::kTrackEvent, event_);
  write_packet(packet_);
}

void PerfettoTraceWriter::on_stitched_trace(const StitchedTrace& stitched) {
  if (finished_ || stitched.parts.empty()) return;
  ++stats_.traces;
  const TraceLayout layout = lay_out_trace(stitched, tracks_, options_.flows);
  stats_.clamped += layout.clamped;
  const std::vector<TrackNode>& nodes = layout.nodes;
  // Flows bind to slices: the handing execution's begin carries the id, the
  // part's first execution's begin ends it.
  std::vector<std::vector<uint64_t>> flows_out(nodes.size());
  std::vector<uint64_t> flow_in(nodes.size(), 0);
  for (const FlowLink& link : layout.flows) {
    flows_out[link.from].push_back(next_flow_id_);
    flow_in[link.to] = next_flow_id_;
    ++next_flow_id_;
    ++stats_.flows;
  }
  const bool multi_part = stitched.parts.size() > 1;
  std::vector<int32_t> open;
  for (const std::vector<int32_t>& events : layout.per_track) {
    if (events.empty()) continue;
    const uint64_t uuid = perfetto_thread_uuid(layout.tracks[nodes[events.front()].track].tid);
    for (int32_t n : events) {
      const TrackNode& node = nodes[n];
      // Close what is not this execution's caller on this track; one that
      // overlaps it (only with broken input) ends where it begins.
      while (!open.empty() && open.back() != node.same_track) {
        const TrackNode& done = nodes[open.back()];
        if (done.end > node.start) ++stats_.clamped;
        write_slice_end(std::min(done.end, node.start), uuid);
        open.pop_back();
      }
      write_slice_begin(node, uuid, multi_part, flows_out[n], flow_in[n]);
      open.push_back(n);
    }
    while (!open.empty()) {
      write_slice_end(nodes[open.back()].end, uuid);
      open.pop_back();
    }
  }
}

uint64_t PerfettoTraceWriter::counter_track(const std::string& host, const std::string& name) {
  auto [it, inserted] = counter_uuids_.try_emplace({host, name}, next_counter_uuid_);
  if (!inserted) return it->second;
  ++next_counter_uuid_;
  const int32_t pid = tracks_.pid_for(host);  // its process track first
  begin_packet(packet_, false);
  event_.clear();
  event_.uint(track_descriptor::kUuid, it->second);
  event_.uint(track_descriptor::kParentUuid, perfetto_process_uuid(pid));
  event_.text(track_descriptor::kName, to_valid_utf8(name));
  scratch_.clear();
  event_.message(track_descriptor::kCounter, scratch_);  // CounterDescriptor, all defaults
  packet_.message(packet::kTrackDescriptor, event_);
  write_packet(packet_);
  ++stats_.counter_tracks;
  return it->second;
}

bool PerfettoTraceWriter::on_sampler_record(const format::Record& r) {
  if (finished_ || r.schema == nullptr || !is_sampler_class(r.schema->class_name)) return false;
  const int time_field = r.schema->field_index("timestamp");
  const int host_field = r.schema->field_index("hostname");
  if (time_field < 0 || static_cast<size_t>(time_field) >= r.values.size()) return false;
  const int64_t* time = std::get_if<int64_t>(&r.values[time_field]);
  if (time == nullptr) return false;
  std::string host = kUnknownHost;
  if (host_field >= 0 && static_cast<size_t>(host_field) < r.values.size()) {
    if (const auto* h = std::get_if<std::string_view>(&r.values[host_field]); h && !h->empty())
      host.assign(*h);
  }
  // The object a record is about (a CPU, an interface, a disk): its other
  // text fields.
  std::string prefix(simple_name(r.schema->class_name));
  const auto& fields = r.schema->fields;
  for (size_t i = 0; i < fields.size() && i < r.values.size(); ++i) {
    if (static_cast<int>(i) == host_field) continue;
    if (const auto* s = std::get_if<std::string_view>(&r.values[i]); s && !s->empty())
      prefix += " " + std::string(*s);
  }
  bool used = false;
  for (size_t i = 0; i < fields.size() && i < r.values.size(); ++i) {
    if (static_cast<int>(i) == time_field || fields[i].name == "pid") continue;
    double value = 0;
    if (const auto* d = std::get_if<double>(&r.values[i])) {
      value = *d;
    } else if (const auto* n = std::get_if<int64_t>(&r.values[i])) {
      value = static_cast<double>(*n);
    } else {
      continue;
    }
    const uint64_t uuid = counter_track(host, prefix + " " + fields[i].name);
    event_.clear();
    event_.uint(track_event::kType, track_event::kCounter);
    event_.uint(track_event::kTrackUuid, uuid);
    event_.float64(track_event::kDoubleCounterValue, value);
    begin_packet(packet_, false);
    packet_.uint(packet::kTimestamp, timestamp_of(*time));
    packet_.message(packet::kTrackEvent, event_);
    write_packet(packet_);
    ++stats_.counter_values;
    used = true;
  }
  return used;
}

void PerfettoTraceWriter::finish() {
  if (finished_) return;
  finished_ = true;
  out_.flush();
}

}  // namespace sonde::analysis
