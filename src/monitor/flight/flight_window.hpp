// What a flight-recorder snapshot keeps of one thread's held events: the
// traces that have an event in the window [cutoff, cut], whole where the
// held events still reach back to their start. Pure functions on one
// thread's raw events in order (raw_event.hpp); the flight recorder
// (flight_recorder.hpp) concatenates the thread's held buffers first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "monitor/raw_event.hpp"

namespace sonde::monitor::flight {

// The events [first, last) a snapshot writes, and what it leaves out.
struct WindowSlice {
  size_t first = 0;
  size_t last = 0;
  // Events before `first` that belong to a trace with an event in the
  // window whose start the held events no longer reach (the trace is left
  // out: a trace without its start cannot be reconstructed).
  size_t cut_off_start = 0;
};

// Whether the event carries a time in `a` (enters, exits, failed exits,
// loss markers); trace begins, parents and causes do not.
bool has_time(const RawEvent& e);
// +1 for an enter, -1 for an exit or a failed exit, 0 otherwise.
int depth_step(const RawEvent& e);

// events[0, n) of one thread, oldest first. `cut`: the snapshot's instant
// (raw timer): timed events after it and the trace begins that only lead
// to them are not taken. `cutoff`: the window's start: a trace is kept when
// it has a timed event at or after it, or is open at the cut.
WindowSlice window_slice(const RawEvent* events, size_t n, uint64_t cutoff, uint64_t cut);

// For a trace whose start left the ring (a server thread's connection
// loop without trace_start): the calls inside it that begin at or after
// `cutoff` and end before `end`, each as a trace of its own (a trace begin
// with `next_id`, counting up, then the call's events). Calls still open at
// `end` are kept open (the snapshot closes them). Appends to `out`;
// returns the number of traces made.
size_t salvage_calls(const RawEvent* events, size_t end, uint64_t cutoff, uint64_t* next_id,
                     std::vector<RawEvent>* out);

}  // namespace sonde::monitor::flight
