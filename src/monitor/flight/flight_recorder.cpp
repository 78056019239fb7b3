#include "monitor/flight/flight_recorder.hpp"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <string_view>

#include "monitor/clock.hpp"
#include "monitor/controller_state.hpp"
#include "monitor/flight/flight_window.hpp"
#include "monitor/process_info.hpp"
#include "monitor/registry.hpp"
#include "monitor/writers/writer_factories.hpp"

namespace sonde::monitor::flight {
namespace {

// Requests from other threads and signal handlers; the writer compares
// them with the counts it has served.
std::atomic<uint32_t> g_signal_requests{0};
std::atomic<uint32_t> g_api_requests{0};
std::mutex g_reason_mu;
std::string* g_reason = nullptr;  // the newest sonde_snapshot() reason

int64_t now_ms() { return monotonic_ns_now() / 1000000; }

// The newest timed event of a buffer's events (0: none).
uint64_t newest_time(const Buffer& b) {
  for (size_t i = b.used; i-- > 0;)
    if (has_time(b.events[i])) return b.events[i].a;
  return 0;
}

}  // namespace

FlightRecorder::FlightRecorder(const Config& config)
    : config_(config), ring_buffers_(flight_ring_buffers(config)) {}

void FlightRecorder::request_snapshot(const char* reason, bool from_signal) {
  if (from_signal) {
    g_signal_requests.fetch_add(1, std::memory_order_release);
  } else {
    {
      std::lock_guard lock(g_reason_mu);
      if (g_reason == nullptr) g_reason = new std::string;  // never freed: used at exit
      *g_reason = reason == nullptr ? "" : reason;
    }
    g_api_requests.fetch_add(1, std::memory_order_release);
  }
  controller::state().doorbell.ring();
}

std::string FlightRecorder::load_context_model() {
  if (config_.flight_context_model.empty()) return "";
  std::string err = context_.load(config_.flight_context_model, config_.flight_context_score,
                                  config_.flight_context_min_excess_us * 1e3);
  return err.empty() ? "" : "flight_context_model '" + config_.flight_context_model + "': " + err;
}

void FlightRecorder::trigger(std::string reason) {
  if (!triggered_) trigger_reason_ = std::move(reason);
  triggered_ = true;
}

void FlightRecorder::scan(controller::State& s, Held& h, const RawEvent* begin,
                          const RawEvent* end) {
  if (!scanning()) return;
  const double ns_per_tick = s.core->calibration().ns_per_tick();
  for (const RawEvent* e = begin; e != end; ++e) {
    if (slow_ticks_ != 0) {
      const int step = depth_step(*e);
      if (step > 0) {
        if (h.depth++ == 0) h.trace_start = e->a;
      } else if (step < 0 && h.depth > 0) {
        if (--h.depth == 0 && e->a - h.trace_start >= slow_ticks_) {
          trigger("a trace of at least flight_slow_trace_ms " +
                  std::to_string(config_.flight_slow_trace_ms) + " ms ended");
        }
      }
    }
    if (context_.active() && context_.on_event(h.context, *e, *s.core, ns_per_tick)) {
      trigger(context_.describe());
    }
  }
}

void FlightRecorder::release(controller::State& s, Buffer* b) {
  if (b->final || !b->channel->returns.push(b)) {
    MonitorLock lock(s.channels_mu);
    s.recycled.push_back(b);
  }
}

void FlightRecorder::set_slow_ticks(const controller::State& s) {
  if (slow_ticks_ != 0 || config_.flight_slow_trace_ms == 0 || !s.core) return;
  slow_ticks_ = static_cast<uint64_t>(double(config_.flight_slow_trace_ms) * 1e6 /
                                      s.core->calibration().ns_per_tick());
}

void FlightRecorder::hold(controller::State& s, Buffer* b) {
  set_slow_ticks(s);
  Held& h = held_[b->channel];
  const size_t from = h.scanned_buffer == b ? h.scanned : 0;
  scan(s, h, b->events + from, b->events + b->used);
  h.scanned_buffer = nullptr;
  h.scanned = 0;
  h.buffers.push_back(b);
  while (h.buffers.size() > ring_buffers_) {
    release(s, h.buffers.front());
    h.buffers.pop_front();
  }
}

bool FlightRecorder::holds(const ThreadChannel* ch) const {
  auto it = held_.find(ch);
  return it != held_.end() && !it->second.buffers.empty();
}

void FlightRecorder::expire_exited(controller::State& s, uint64_t now_raw, double ns_per_tick) {
  const double window_ns = double(config_.flight_window_ms) * 1e6;
  for (auto it = held_.begin(); it != held_.end();) {
    const ThreadChannel* ch = it->first;
    Held& h = it->second;
    const bool done = ch->exited.load(std::memory_order_acquire) &&
                      ch->handed_off.load(std::memory_order_acquire) == ch->processed;
    const uint64_t newest = h.buffers.empty() ? 0 : newest_time(*h.buffers.back());
    if (done && double(now_raw - newest) * ns_per_tick > window_ns) {
      for (Buffer* b : h.buffers) release(s, b);
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
}

void FlightRecorder::scan_partial(controller::State& s) {
  set_slow_ticks(s);
  if (!scanning()) return;
  MonitorLock lock(s.channels_mu);
  for (ThreadChannel* ch : s.channels) {
    const auto [b, upto] = filled_part(*ch);
    if (b == nullptr) continue;
    Held& h = held_[ch];
    const size_t from = h.scanned_buffer == b ? h.scanned : 0;
    if (upto <= from) continue;
    scan(s, h, b->events + from, b->events + upto);
    h.scanned_buffer = b;
    h.scanned = upto;
  }
}

bool FlightRecorder::serve(controller::State& s) {
  std::string reason;
  bool asked = false;  // by a signal or the API: no interval applies
  if (const uint32_t n = g_signal_requests.load(std::memory_order_acquire); n != signals_served_) {
    signals_served_ = n;
    reason = "signal " + std::to_string(config_.flight_signal);
    asked = true;
  } else if (const uint32_t m = g_api_requests.load(std::memory_order_acquire);
             m != requests_served_) {
    requests_served_ = m;
    std::lock_guard lock(g_reason_mu);
    reason = "sonde_snapshot(" + (g_reason == nullptr ? std::string() : *g_reason) + ")";
    asked = true;
  } else if (triggered_) {
    triggered_ = false;
    reason = std::move(trigger_reason_);
  } else {
    return false;
  }
  const int64_t now = now_ms();
  if (!asked && last_snapshot_ms_ >= 0 &&
      now - last_snapshot_ms_ < static_cast<int64_t>(config_.flight_min_interval_ms)) {
    ++stats_.suppressed;
    return false;
  }
  last_snapshot_ms_ = now;
  snapshot_now(s, reason);
  return true;
}

void FlightRecorder::snapshot_now(controller::State& s, const std::string& reason) {
  if (stats_.snapshots + stats_.failed >= config_.flight_max_snapshots) {
    ++stats_.over_limit;
    return;
  }
  const std::string error = write_snapshot(s, reason);
  if (!error.empty()) {
    ++stats_.failed;
    std::fprintf(stderr, "sonde: flight recorder: snapshot not written: %s\n", error.c_str());
  }
}

std::string FlightRecorder::write_snapshot(controller::State& s, const std::string& reason) {
  if (!s.core) return "the writer is not running";
  const uint64_t cut = now_raw();
  const Calibration& clock = s.core->calibration();
  const double window_ticks = double(config_.flight_window_ms) * 1e6 / clock.ns_per_tick();
  const uint64_t cutoff =
      double(cut) > window_ticks ? cut - static_cast<uint64_t>(window_ticks) : 0;
  const ProcessInfo process = describe_process(config_);
  const uint64_t sequence = stats_.snapshots + stats_.failed + 1;
  const std::string path = config_.out_dir + "/" + process.application + "-" +
                           std::to_string(process.pid) + ".snapshot-" + std::to_string(sequence) +
                           ".sonde";
  WriterCore snapshot(config_, make_native_writer_at(config_, path), process);
  if (std::string err = snapshot.open(); !err.empty()) return err;
  if (format::NativeWriter* w = snapshot.writer().native_encoder()) {
    w->meta("snapshot.reason", reason);
    w->meta("snapshot.sequence", std::to_string(sequence));
    w->meta("snapshot.window_ms", std::to_string(config_.flight_window_ms));
    w->meta("snapshot.instant_epoch_ns", std::to_string(clock.to_epoch_ns(cut)));
  }
  // Copy every thread's held events and the written part of its current
  // buffer at one instant; the threads go on filling theirs meanwhile.
  struct Taken {
    ThreadChannel* channel;
    std::vector<RawEvent> events;
  };
  std::vector<Taken> taken;
  {
    MonitorLock lock(s.channels_mu);
    for (ThreadChannel* ch : s.channels) {
      Taken t{ch, {}};
      if (auto it = held_.find(ch); it != held_.end()) {
        for (const Buffer* b : it->second.buffers)
          t.events.insert(t.events.end(), b->events, b->events + b->used);
      }
      // Only when every earlier buffer reached the writer: else the prefix
      // would come before events still on their way.
      if (const auto [b, filled] = filled_part(*ch); b != nullptr)
        t.events.insert(t.events.end(), b->events, b->events + filled);
      if (!t.events.empty()) taken.push_back(std::move(t));
    }
  }
  // Traces made of calls inside a trace whose start left the ring: ids
  // in a range of their own.
  uint64_t salvaged_id = (uint64_t{1} << 62) + (sequence << 32);
  for (Taken& t : taken) {
    const WindowSlice w = window_slice(t.events.data(), t.events.size(), cutoff, cut);
    if (w.cut_off_start != 0) {
      ++stats_.traces_cut_off;
      std::vector<RawEvent> calls;
      stats_.calls_salvaged +=
          salvage_calls(t.events.data(), w.first, cutoff, &salvaged_id, &calls);
      snapshot.consume(*t.channel, calls.data(), calls.data() + calls.size());
    }
    snapshot.consume(*t.channel, t.events.data() + w.first, t.events.data() + w.last);
  }
  static const uint32_t open_cause = intern_cause("still running at the flight-recorder snapshot");
  snapshot.close_open_frames(open_cause, cut);
  snapshot.flush(true);
  const uint64_t written = snapshot.events_written();
  snapshot.close();
  if (snapshot.writer().failed()) return path + ": " + snapshot.writer().error();
  ++stats_.snapshots;
  stats_.events_written += written;
  stats_.last_path = path;
  return "";
}

}  // namespace sonde::monitor::flight
