// The writer thread's work, independent of how it is scheduled: decodes raw
// per-thread events, names operations on first use, keeps the counts that
// make loss visible, and feeds the configured EventWriter.
#pragma once

#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "monitor/channel.hpp"
#include "monitor/clock.hpp"
#include "monitor/symbolizer.hpp"
#include "monitor/writers/event_writer.hpp"

namespace sonde::monitor {

class WriterCore {
 public:
  WriterCore(const Config& config, std::unique_ptr<EventWriter> writer, ProcessInfo process);
  // Returns "" or the error that keeps the log from being written.
  std::string open();

  // Consumes one run of a thread's events; runs of a thread must arrive in order.
  void consume(ThreadChannel& ch, const RawEvent* begin, const RawEvent* end);
  void record(const format::Record& r);
  // Lost events that never reached a buffer (counted by the thread).
  void report_loss(uint32_t thread, uint64_t events, std::string_view reason);
  void refresh_clock();
  void flush(bool force);
  void close();
  // Code in [begin, end) was unloaded: addresses there are resolved anew
  // (as new operations) if they show up again, and the symbolizer re-reads
  // the process's mappings.
  void forget_functions(uint64_t begin, uint64_t end);

  // Writes a failed exit with `cause` for every frame that the written
  // stream opened and did not close, innermost first, on every thread, so
  // that each trace in the log is complete. Works from the stream alone: a
  // thread that is still running, returned after the last drain or has
  // exited cannot make it disagree with what was written.
  void close_open_frames(uint32_t cause, uint64_t now);

  uint64_t events_written() const { return written_ - writer_->events_lost(); }
  // Functions seen for the first time so far: culling ends a pause when this
  // grows (new code is running, perhaps new hot helpers).
  // Monotonic: functions forgotten at dlclose do not lower it.
  uint64_t functions_seen() const { return functions_seen_; }
  // The name the log gave the function at `address` (its first event), or
  // null if none was written (or its code was unloaded since). Culling
  // names its candidates with it instead of symbolizing them again.
  const std::string* function_name(uint64_t address) const;
  // The same, naming the function in the log now if it has no name yet
  // (culling, which observes events before they are written).
  const std::string* name_function(uint64_t address);
  // The module (object file) of a named function, or null (as function_name).
  const std::string* function_module(uint64_t address) const;
  uint64_t events_lost() const { return lost_ + writer_->events_lost(); }
  const EventWriter& writer() const { return *writer_; }
  EventWriter& writer() { return *writer_; }
  const Calibration& calibration() const { return calibration_; }
  const ProcessInfo& process() const { return process_; }

 private:
  struct Decode {
    uint32_t depth = 0;
    bool in_trace = false;
    // The enter word of each open frame (open[0 .. depth-1]); slots above
    // depth hold stale words. Kept so the log can be closed from the stream.
    std::vector<uint64_t> open;
  };
  // Makes room for a frame at index `depth` (rarely: doubling).
  static uint64_t* grow_open(Decode& d, uint32_t depth);
  void consume_decoded(uint32_t thread, Decode& d, const RawEvent* begin, const RawEvent* end);
  void count_only(const RawEvent* begin, const RawEvent* end);
  // Decodes into scratch_ for EventWriter::events(); returns the probe events.
  uint64_t decode(Decode& d, const RawEvent* begin, const RawEvent* end);
  // Encodes straight into the native writer's event block; returns the probe events.
  uint64_t encode_native(format::NativeWriter& w, uint32_t thread, Decode& d, const RawEvent* begin,
                         const RawEvent* end);
  uint32_t function_op(uint64_t address);
  uint32_t function_op_slow(uint64_t address);
  uint32_t manual_op(uint64_t id);
  uint32_t manual_op_slow(uint64_t id);
  struct OpCacheEntry {
    uint64_t key = 0;  // address, or manual id + 1 (0 = empty)
    uint32_t op = 0;
  };
  static constexpr size_t kOpCacheSize = 1024;
  void announce(ThreadChannel& ch);

  const Config& config_;
  std::unique_ptr<EventWriter> writer_;
  ProcessInfo process_;
  Calibration calibration_;
  std::unique_ptr<Symbolizer> symbolizer_;
  OpCacheEntry fn_cache_[kOpCacheSize];
  OpCacheEntry manual_cache_[kOpCacheSize];
  struct NamedOp {
    uint32_t op = 0;
    std::string name;    // as written to the log (function_name)
    std::string module;  // the same (the flight recorder's context keys)
  };
  std::unordered_map<uint64_t, NamedOp> function_ops_;
  std::unordered_map<uint64_t, uint32_t> manual_ops_;
  uint32_t next_op_ = 0;
  uint64_t functions_seen_ = 0;
  std::unordered_map<uint32_t, Decode> decode_;
  std::unordered_set<uint32_t> announced_;  // threads described in this log
  std::vector<DecodedEvent> scratch_;
  uint64_t written_ = 0;
  uint64_t lost_ = 0;
  bool reported_failure_ = false;
};

}  // namespace sonde::monitor
