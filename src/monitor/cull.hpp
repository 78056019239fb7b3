// Automatic overhead culling (cull = auto; docs/cull.md). A first phase
// observes every monitored call as the writer drains it and measures each
// function's calls and inclusive durations; when the phase ends (after
// cull_phase_calls calls or cull_phase_ms, whichever comes first) the
// functions that are called often and short on their own (cull_rule.hpp)
// are excluded in addition to the patterns, the filter is rebuilt (and XRay
// unpatches them), and a report is written next to the log. Afterwards the
// kept calls are counted, so the exit summary can state the measured
// monitored-call rate. All three are called by the controller; none is on
// a probe's path.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "monitor/raw_event.hpp"

namespace sonde::monitor {

struct ThreadChannel;  // monitor/channel.hpp

// The name the log already gave a function (WriterCore::function_name), or
// null. Deciding a window names its candidates (to apply the patterns'
// pins); symbolizing them again cost 8-40 ms per window in db_bench, time
// in which the writer drained nothing and the program waited for buffers.
using FunctionNames = std::function<const std::string*(uint64_t address)>;

// Writer thread, core_mu held: one thread's events in order, as drained
// (drain_full, drain_partial; or the probing thread in mode = sync).
// `functions_seen`: WriterCore::functions_seen(); a pause in observation
// ends when it has grown since the pause began. Before observing them, it
// makes the decisions the events observed so far made due (ripe leaves, a
// full window), every 1,024 events, so that a writer draining a backlog
// does not decide only after all of it. `may_decide` false (a probing
// thread in mode = sync): only observes; cull_poll decides.
void cull_observe(const ThreadChannel& ch, const RawEvent* begin, const RawEvent* end,
                  uint64_t functions_seen, const FunctionNames& names, bool may_decide);
// Writer thread, every loop iteration, core_mu held (the controller holds
// it across fork(), which keeps this module's own lock free there): ends
// the first phase when due (builds the exclusion). `now_ms`:
// monotonic_ns_now() / 1000000.
void cull_poll(int64_t now_ms, const FunctionNames& names);
// Writer thread, core_mu held: whether a window is observing now and the
// program made events in the last 100 ms. The writer then also takes what threads have put into
// their current buffers (drain_partial) about every millisecond: a full buffer is 16,384 events,
// 3-5 ms of a -finstrument-functions program, during which a function that
// had reached cull_min_calls went on being recorded.
bool cull_wants_fresh_events(int64_t now_ms);
// At exit, core_mu held: the culling summary on stderr (what was excluded,
// predicted and measured cost). A phase still running at exit is decided
// for the report only.
void cull_print_summary(const FunctionNames& names);

}  // namespace sonde::monitor
