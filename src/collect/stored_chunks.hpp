// What a listener remembers of each native stream so that a sender that
// reconnects and resends its unconfirmed chunks gets nothing stored twice:
// the highest stream chunk number stored (docs/formats/native.md,
// "Streaming over TCP"). One thread (the listener's) uses it.
//
// Bounded: a stream with a connection is always kept; of the streams
// whose connections have all ended, only the `keep_closed` that ended
// last. A sender resends within seconds of losing its connection (its
// retry delays, or its shutdown's flush timeout), while thousands of other
// streams end; one that comes back later than that is stored again from
// its first resent chunk, as a restarted collector does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>

namespace sonde::collect {

class StoredChunks {
 public:
  static constexpr size_t kDefaultKeepClosed = 65536;
  explicit StoredChunks(size_t keep_closed = kDefaultKeepClosed) : keep_closed_(keep_closed) {}

  // A connection carries `stream` from now on.
  void attach(const std::string& stream);
  // That connection ended (call once per attach).
  void detach(const std::string& stream);
  // The highest chunk number of `stream` stored so far (0: none), to read
  // and raise. Only for an attached stream.
  uint64_t& highest_stored(const std::string& stream) { return entries_[stream].stored; }

  size_t streams() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t stored = 0;
    uint32_t connections = 0;
    uint64_t detached_at = 0;  // sequence number of its last detach
  };
  struct Detached {
    std::string stream;
    uint64_t at = 0;
  };
  std::unordered_map<std::string, Entry> entries_;
  std::deque<Detached> detached_;  // oldest first
  uint64_t next_detach_ = 1;
  size_t keep_closed_;
};

}  // namespace sonde::collect
