// What the writer thread hands to a log writer: process and thread
// descriptions, operations on first use, and decoded per-thread event runs.
// One small class per output (native, Kieker dat/bin, TCP, null).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "format/native_format.hpp"
#include "format/native_writer.hpp"
#include "format/record.hpp"
#include "monitor/clock.hpp"
#include "monitor/config.hpp"

namespace sonde::monitor {

struct ProcessInfo {
  std::string hostname;
  std::string application;
  int64_t pid = 0;
  int64_t parent_pid = 0;
  std::string executable;
  std::string command_line;
  std::string timer;
  int64_t start_epoch_ns = 0;
};

struct OperationInfo {
  uint32_t id = 0;
  std::string name;  // demangled function name or the manual probe's name
  format::native::OperationKind kind = format::native::OperationKind::kFunction;
  std::string module;
  uint64_t address = 0;  // module-relative for functions
  std::string file;
  uint32_t line = 0;
};

struct ThreadInfo {
  uint32_t index = 0;
  uint64_t os_tid = 0;
  std::string name;
};

struct DecodedEvent {
  format::native::EventKind kind;
  uint64_t time = 0;  // raw timer value
  uint32_t op = 0;
  uint32_t cause = 0;  // cause registry id (failed exits)
  uint64_t trace_id = 0;
  int64_t parent_trace_id = -1;
  int32_t parent_order_id = -1;
  uint64_t lost = 0;
  format::w3c::Context w3c;  // trace begin: the W3C trace it continued, if sonde did not start it
};

class EventWriter {
 public:
  virtual ~EventWriter() = default;
  // Returns "" or an error naming what could not be opened.
  virtual std::string open(const ProcessInfo& process) = 0;
  virtual void operation(const OperationInfo& op) = 0;
  virtual void thread(const ThreadInfo& t) = 0;
  virtual void events(uint32_t thread, const DecodedEvent* events, size_t count) = 0;
  virtual void record(const format::Record& r) = 0;
  virtual void clock(const Calibration& c) = 0;
  virtual void loss(uint32_t thread, uint64_t events, std::string_view reason) = 0;
  // Makes everything so far durable/visible; `force` also for partial chunks.
  virtual void flush(bool force) = 0;
  virtual void close(uint64_t events_written, uint64_t events_lost) = 0;
  // A writer that failed keeps failing; its events are counted as lost.
  virtual bool failed() const = 0;
  virtual std::string error() const = 0;
  // Where the log went (file, directory or peer), for the exit summary.
  virtual std::string location() const = 0;
  virtual uint64_t bytes_written() const = 0;
  // Events the writer accepted but could not deliver (e.g. TCP peer away
  // beyond the buffer bound); counted into the log's loss totals.
  virtual uint64_t events_lost() const { return 0; }
  // False for writers that discard events (null): the writer thread then
  // only counts them, so benchmarks measure collection, not decoding.
  virtual bool wants_events() const { return true; }
  // The native writer's encoder, or nullptr: WriterCore then encodes raw
  // events straight into its event blocks instead of going through
  // events(), which saves a decoded copy of every event.
  virtual format::NativeWriter* native_encoder() { return nullptr; }
};

std::unique_ptr<EventWriter> make_event_writer(const Config& config);

}  // namespace sonde::monitor
