// Stitched traces as a Perfetto protobuf trace (`.pftrace`), the format
// Perfetto UI and trace_processor read natively, far beyond the size at
// which a JSON trace stops loading. The schema subset written is
// docs/formats/perfetto.md:
//
// - one process track per host and one thread track per recorded thread
//   (or lane), as TrackDescriptors before their first event; tracks, nesting
//   and flows are laid out as for Chrome JSON (trace_tracks.hpp);
// - each execution a slice: a TrackEvent SLICE_BEGIN and SLICE_END, its
//   name and the category interned once per output (InternedData), its
//   trace id, eoi and ess (and failure cause, full signature when the name
//   is short) as debug annotations;
// - a continued part linked to the execution that handed its context on by
//   a flow (flow_ids on the parent's slice, terminating_flow_ids on the
//   part's first);
// - samplers' records (CPU, memory, process, network, disk) as counter
//   tracks of their host's process, one per host, object and field;
// - lost markers as instant events "events lost" on their thread's track.
//
// Every packet is on one sequence (trusted_packet_sequence_id 1); the first
// clears the incremental state, and every packet that refers to interned
// data says it needs it. Packets are written as they are made, so memory
// stays bounded by one stitched trace and the interning tables.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/export/protobuf_wire.hpp"
#include "analysis/export/trace_tracks.hpp"
#include "analysis/model/stitched_trace.hpp"
#include "format/record.hpp"

namespace sonde::analysis {

struct PerfettoTraceOptions {
  // Slice names: "Catalog.getBook(..)" (short, the full signature then goes
  // into an "operation" annotation) or the full signature.
  bool short_labels = true;
  bool flows = true;
};

struct PerfettoTraceStats {
  uint64_t traces = 0;
  uint64_t slices = 0;          // one per execution
  uint64_t flows = 0;           // parent execution -> continued part
  uint64_t counter_values = 0;  // sampler values written
  uint64_t counter_tracks = 0;
  uint64_t loss_markers = 0;  // instant events
  uint64_t events_lost = 0;   // their counts summed
  uint64_t processes = 0;
  uint64_t threads = 0;  // thread tracks, lanes included
  uint64_t clamped = 0;  // executions moved inside their caller's span
  uint64_t interned_names = 0;
  uint64_t packets = 0;
};

class PerfettoTraceWriter : public StitchedTraceSink {
 public:
  explicit PerfettoTraceWriter(std::ostream& out, PerfettoTraceOptions options = {});
  PerfettoTraceWriter(const PerfettoTraceWriter&) = delete;
  PerfettoTraceWriter& operator=(const PerfettoTraceWriter&) = delete;

  void on_stitched_trace(const StitchedTrace& trace) override;
  // A record the trace reconstruction does not use: sampler records become
  // counter values, anything else is ignored. Returns whether it was used.
  bool on_sampler_record(const format::Record& record);
  // A lost marker: an instant event "events lost" on its thread's track,
  // with the count, so a gap in the slices has its reason beside it.
  void on_lost_events(const format::LostEvents& lost);

  // Flushes the stream. Later traces and records are ignored. Check the
  // stream's state afterwards for write errors.
  void finish();

  const PerfettoTraceStats& stats() const { return stats_; }

 private:
  void write_packet(const proto::ProtoMessage& packet);
  // Starts a packet on the sequence (its id and, the first time, the flag
  // that clears the incremental state; `interned` adds the flag that it
  // needs that state).
  void begin_packet(proto::ProtoMessage& packet, bool interned);
  void write_process_track(int32_t pid, const std::string& host);
  void write_thread_track(int32_t pid, int32_t tid, const std::string& name);
  uint64_t intern_name(std::string_view name, proto::ProtoMessage& interned);
  // The category and annotation names, into the first packet that uses them.
  void intern_common(proto::ProtoMessage& interned);
  uint64_t intern_annotation_value(std::string_view value, proto::ProtoMessage& interned);
  uint64_t counter_track(const std::string& host, const std::string& name);
  void write_slice_begin(const TrackNode& node, uint64_t track_uuid, bool multi_part,
                         const std::vector<uint64_t>& flows_out, uint64_t flow_in);
  void write_slice_end(int64_t time, uint64_t track_uuid);

  std::ostream& out_;
  PerfettoTraceOptions options_;
  TrackAllocator tracks_;
  bool first_packet_ = true;
  bool common_interned_ = false;
  bool finished_ = false;
  uint64_t next_flow_id_ = 1;
  uint64_t next_counter_uuid_ = 1ULL << 48;  // disjoint from process and thread uuids
  // Heterogeneous lookup: found by string_view, keyed by string.
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  using Interned = std::unordered_map<std::string, uint64_t, TextHash, std::equal_to<>>;
  Interned name_iids_;
  Interned value_iids_;
  std::map<std::pair<std::string, std::string>, uint64_t> counter_uuids_;  // (host, name)
  proto::ProtoMessage packet_, event_, interned_, scratch_, annotation_;
  proto::ProtoMessage frame_;
  PerfettoTraceStats stats_;
};

// Track uuids: process `pid` and thread `tid` (disjoint: tids start at
// 1000001, TrackAllocator).
inline uint64_t perfetto_process_uuid(int32_t pid) { return static_cast<uint64_t>(pid); }
inline uint64_t perfetto_thread_uuid(int32_t tid) { return static_cast<uint64_t>(tid); }

}  // namespace sonde::analysis
