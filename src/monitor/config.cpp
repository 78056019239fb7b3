#include "monitor/config.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "format/compressed_format.hpp"

extern char** environ;

namespace sonde::monitor {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string bad(std::string_view key, std::string_view value, std::string_view expected) {
  return "config key '" + std::string(key) + "': invalid value '" + std::string(value) +
         "' (expected " + std::string(expected) + ")";
}

bool parse_u32(std::string_view v, uint32_t min, uint32_t max, uint32_t* out) {
  uint64_t x = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || ptr != v.data() + v.size() || x < min || x > max) return false;
  *out = static_cast<uint32_t>(x);
  return true;
}

bool parse_bool(std::string_view v, bool* out) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return *out = true, true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return *out = false, true;
  return false;
}

std::vector<std::string> split_list(std::string_view v) {
  std::vector<std::string> out;
  while (!v.empty()) {
    size_t comma = v.find(',');
    std::string_view item = trim(v.substr(0, comma));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = {
      {"enabled", "monitor at all (true/false)"},
      {"out", "directory for logs"},
      {"writer", "native | kieker-dat | kieker-bin | tcp | null"},
      {"mode", "async | sync"},
      {"policy", "block | drop (when all of a thread's buffers are full)"},
      {"buffer_events", "events per buffer (64..16777216)"},
      {"buffers_per_thread", "buffers per thread (2..64)"},
      {"burst_buffers",
       "buffers any thread may take beyond buffers_per_thread while the writer is behind "
       "(process-wide, 0..4096)"},
      {"block_timeout_ms", "block policy: longest wait for a free buffer before dropping"},
      {"fault_writer_stall_ms",
       "testing: the writer thread sleeps this long before its first write (a stalled disk)"},
      {"timer", "auto | tsc | monotonic"},
      {"compression", "native writer: zstd | lz4 | none"},
      {"compression_level", "zstd level 1..19 (lz4: acceleration)"},
      {"tcp_host", "tcp writer: IPv4 address of the receiver"},
      {"tcp_port", "tcp writer: port"},
      {"tcp_retry_ms", "tcp writer: first reconnect delay"},
      {"tcp_retry_max_ms", "tcp writer: longest reconnect delay"},
      {"tcp_buffer_bytes",
       "tcp writer: bytes kept until the receiver confirms them (native) or while disconnected "
       "(kieker)"},
      {"tcp_protocol",
       "tcp writer: native (sonde collect; confirmed, resent after a reconnect) | kieker (Kieker's "
       "TCP frames)"},
      {"tcp_exit_wait_ms",
       "tcp writer: at exit, longest wait for an absent receiver to come back (a connected one is "
       "waited for while it makes progress)"},
      {"patterns", "include/exclude rules, ';'-separated (+glob / -glob)"},
      {"trace_start",
       "functions whose entry starts a trace, ';'-separated globs; calls outside them are not "
       "recorded (default: every outermost call starts one)"},
      {"stop_signals",
       "on SIGTERM/SIGINT/SIGHUP write everything and close the log before the signal takes "
       "effect (true/false)"},
      {"patterns_file", "adaptive monitoring file, re-read when it changes"},
      {"patterns_reload_ms", "how often patterns_file is checked"},
      {"samplers", "comma list: cpu, memory, process, network, disk, all"},
      {"sampler_period_ms", "sampling period"},
      {"flush_interval_ms", "how often partial buffers are written"},
      {"fork", "follow (child writes its own log) | stop (child is not monitored)"},
      {"crash_flush_timeout_ms", "longest wait for the final flush on a fatal signal"},
      {"kieker_max_entries_per_file", "Kieker writers: records per data file"},
      {"kieker_compression", "Kieker writers: none | gzip | zlib | xz | bzip2 | zip per data file"},
      {"hostname", "host name recorded in traces"},
      {"application", "application name recorded in the log"},
      {"xray", "auto (patch the functions of a clang -fxray-instrument program by pattern) | off"},
      {"summary", "print a summary line to stderr at exit (true/false)"},
      {"cull",
       "off | auto (observe a first phase, then exclude functions called often whose own mean "
       "duration is short next to the probe's cost)"},
      {"cull_phase_calls", "cull: the first phase ends after this many monitored calls"},
      {"cull_phase_ms", "cull: ... or after this many milliseconds, whichever comes first"},
      {"cull_rounds",
       "cull: how many such windows decide (0: one after another for the whole run)"},
      {"cull_min_calls", "cull: a function needs at least this many calls in the phase"},
      {"cull_min_rate", "cull: ... and at least this many calls per second"},
      {"cull_max_ns", "cull: ... and an own mean duration below this many ns"},
      {"cull_probe_ns", "cull: the cost of one monitored call (enter + exit) in ns"},
      {"cull_leaf_instructions",
       "cull: straight-line leaves of at most this many instructions are culled as soon as they "
       "have cull_min_calls calls (0: off)"},
      {"cull_early_percent",
       "cull: a function whose own mean duration over its first cull_min_calls calls is below "
       "this percentage of cull_max_ns is culled then, without waiting for its window (0: off)"},
      {"patch_call_sites",
       "overwrite the -finstrument-functions hook calls of excluded functions with NOPs "
       "(true/false)"},
      {"source_lines",
       "resolve each function's source file and line from DWARF when the writer first meets it "
       "(true/false)"},
      {"probe_lock_wait", "record contended pthread_mutex_lock waits (true/false)"},
      {"probe_lock_wait_threshold_ns", "record only lock waits at least this long"},
      {"probe_database", "record database calls: SQLite, sonde_record_database_call (true/false)"},
      {"probe_messaging", "record message sends: sonde_record_message_send (true/false)"},
      {"probes_file", "file of probe_* keys, re-read when it changes"},
      {"probe_queue_records", "diagnostic records pending for the writer before loss"},
      {"flight",
       "on: flight recorder, each thread's newest events stay in memory and are written only "
       "as snapshots (off | on)"},
      {"flight_ring_kib", "flight recorder: memory per thread for its newest events"},
      {"flight_window_ms", "flight recorder: how far back from its instant a snapshot reaches"},
      {"flight_signal",
       "flight recorder: the signal that asks for a snapshot (0: none; 12 = SIGUSR2)"},
      {"flight_slow_trace_ms",
       "flight recorder: a trace at least this long triggers a snapshot (0: off)"},
      {"flight_min_interval_ms",
       "flight recorder: at most one triggered snapshot per this interval (the rest are counted)"},
      {"flight_max_snapshots", "flight recorder: snapshots written at most per run"},
      {"flight_context_model",
       "flight recorder: a model saved by 'sonde context --save-model'; an execution far outside "
       "its calling context triggers a snapshot"},
      {"flight_context_score",
       "flight recorder: the context trigger's robust score, (duration - Q3) / IQR (default 3)"},
      {"flight_context_min_excess_us",
       "flight recorder: the context trigger fires only this far above the context's Q3 (default "
       "1000)"},
  };
  return keys;
}

std::string apply_config(Config& c, std::string_view key, std::string_view value) {
  value = trim(value);
  uint32_t u = 0;
  if (key == "enabled")
    return parse_bool(value, &c.enabled) ? "" : bad(key, value, "true or false");
  if (key == "summary")
    return parse_bool(value, &c.summary) ? "" : bad(key, value, "true or false");
  if (key == "patch_call_sites")
    return parse_bool(value, &c.patch_call_sites) ? "" : bad(key, value, "true or false");
  if (key == "source_lines")
    return parse_bool(value, &c.source_lines) ? "" : bad(key, value, "true or false");
  if (key == "cull") {
    if (value == "auto")
      c.cull = true;
    else if (value == "off")
      c.cull = false;
    else
      return bad(key, value, "off or auto");
    return "";
  }
  if (key == "stop_signals")
    return parse_bool(value, &c.stop_signals) ? "" : bad(key, value, "true or false");
  if (key == "probe_lock_wait")
    return parse_bool(value, &c.probe_lock_wait) ? "" : bad(key, value, "true or false");
  if (key == "probe_messaging")
    return parse_bool(value, &c.probe_messaging) ? "" : bad(key, value, "true or false");
  if (key == "probe_database")
    return parse_bool(value, &c.probe_database) ? "" : bad(key, value, "true or false");
  if (key == "probes_file") {
    c.probes_file = value;
    return "";
  }
  if (key == "out") {
    if (value.empty()) return bad(key, value, "a directory");
    c.out_dir = value;
    return "";
  }
  if (key == "writer") {
    if (value == "native")
      c.writer = WriterKind::kNative;
    else if (value == "kieker-dat")
      c.writer = WriterKind::kKiekerDat;
    else if (value == "kieker-bin")
      c.writer = WriterKind::kKiekerBin;
    else if (value == "tcp")
      c.writer = WriterKind::kTcp;
    else if (value == "null")
      c.writer = WriterKind::kNull;
    else
      return bad(key, value, "native, kieker-dat, kieker-bin, tcp or null");
    return "";
  }
  if (key == "mode") {
    if (value == "async")
      c.synchronous = false;
    else if (value == "sync")
      c.synchronous = true;
    else
      return bad(key, value, "async or sync");
    return "";
  }
  if (key == "kieker_compression") {
    format::Compression parsed;
    if (!format::parse_compression(value, &parsed)) {
      return bad(key, value, "none, gzip, zlib, xz, bzip2 or zip");
    }
    c.kieker_compression = value;
    return "";
  }
  if (key == "flight") {
    if (value == "on")
      c.flight = true;
    else if (value == "off")
      c.flight = false;
    else
      return bad(key, value, "off or on");
    return "";
  }
  if (key == "policy") {
    if (value == "block")
      c.policy = FullPolicy::kBlock;
    else if (value == "drop")
      c.policy = FullPolicy::kDrop;
    else
      return bad(key, value, "block or drop");
    return "";
  }
  if (key == "xray") {
    if (value == "auto")
      c.xray = true;
    else if (value == "off")
      c.xray = false;
    else
      return bad(key, value, "auto or off");
    return "";
  }
  if (key == "fork") {
    if (value == "follow")
      c.fork = ForkPolicy::kFollow;
    else if (value == "stop")
      c.fork = ForkPolicy::kStop;
    else
      return bad(key, value, "follow or stop");
    return "";
  }
  if (key == "timer") {
    if (value == "auto")
      c.timer = TimerChoice::kAuto;
    else if (value == "tsc")
      c.timer = TimerChoice::kTsc;
    else if (value == "monotonic")
      c.timer = TimerChoice::kMonotonic;
    else
      return bad(key, value, "auto, tsc or monotonic");
    return "";
  }
  if (key == "compression") {
    if (value != "zstd" && value != "lz4" && value != "none")
      return bad(key, value, "zstd, lz4 or none");
    c.compression = value;
    return "";
  }
  struct U32Key {
    std::string_view name;
    uint32_t min, max;
    uint32_t* target;
  };
  const U32Key u32_keys[] = {
      {"buffer_events", 64, 1u << 24, &c.buffer_events},
      {"buffers_per_thread", 2, 64, &c.buffers_per_thread},
      {"burst_buffers", 0, 4096, &c.burst_buffers},
      {"block_timeout_ms", 0, 3600000, &c.block_timeout_ms},
      {"fault_writer_stall_ms", 0, 600000, &c.fault_writer_stall_ms},
      {"tcp_retry_ms", 1, 3600000, &c.tcp_retry_ms},
      {"tcp_retry_max_ms", 1, 3600000, &c.tcp_retry_max_ms},
      {"tcp_buffer_bytes", 4096, 1u << 30, &c.tcp_buffer_bytes},
      {"tcp_exit_wait_ms", 0, 3600000, &c.tcp_exit_wait_ms},
      {"patterns_reload_ms", 10, 3600000, &c.patterns_reload_ms},
      {"sampler_period_ms", 10, 3600000, &c.sampler_period_ms},
      {"flush_interval_ms", 1, 3600000, &c.flush_interval_ms},
      {"crash_flush_timeout_ms", 0, 60000, &c.crash_flush_timeout_ms},
      {"kieker_max_entries_per_file", 1, 1u << 30, &c.kieker_max_entries_per_file},
      {"probe_lock_wait_threshold_ns", 0, 4000000000u, &c.probe_lock_wait_threshold_ns},
      {"probe_queue_records", 64, 1u << 24, &c.probe_queue_records},
      {"cull_phase_calls", 1000, 4000000000u, &c.cull_phase_calls},
      {"cull_phase_ms", 10, 3600000, &c.cull_phase_ms},
      {"cull_rounds", 0, 1000000, &c.cull_rounds},
      {"cull_min_calls", 1, 4000000000u, &c.cull_min_calls},
      {"cull_min_rate", 0, 4000000000u, &c.cull_min_rate},
      {"cull_max_ns", 1, 4000000000u, &c.cull_max_ns},
      {"cull_probe_ns", 1, 100000, &c.cull_probe_ns},
      {"cull_leaf_instructions", 0, 100000, &c.cull_leaf_instructions},
      {"cull_early_percent", 0, 100, &c.cull_early_percent},
      {"flight_ring_kib", 64, 1u << 22, &c.flight_ring_kib},
      {"flight_window_ms", 1, 86400000, &c.flight_window_ms},
      {"flight_signal", 0, 64, &c.flight_signal},
      {"flight_slow_trace_ms", 0, 86400000, &c.flight_slow_trace_ms},
      {"flight_min_interval_ms", 0, 86400000, &c.flight_min_interval_ms},
      {"flight_max_snapshots", 1, 1000000, &c.flight_max_snapshots},
      {"flight_context_min_excess_us", 0, 4000000000u, &c.flight_context_min_excess_us},
  };
  for (const U32Key& k : u32_keys) {
    if (key != k.name) continue;
    if (!parse_u32(value, k.min, k.max, k.target)) {
      return bad(key, value,
                 "an integer from " + std::to_string(k.min) + " to " + std::to_string(k.max));
    }
    return "";
  }
  if (key == "compression_level") {
    if (!parse_u32(value, 1, 19, &u)) return bad(key, value, "an integer from 1 to 19");
    c.compression_level = static_cast<int>(u);
    return "";
  }
  if (key == "tcp_port") {
    if (!parse_u32(value, 1, 65535, &u)) return bad(key, value, "a port from 1 to 65535");
    c.tcp_port = static_cast<uint16_t>(u);
    return "";
  }
  if (key == "tcp_protocol") {
    if (value == "native")
      c.tcp_protocol = TcpProtocol::kNative;
    else if (value == "kieker")
      c.tcp_protocol = TcpProtocol::kKieker;
    else
      return bad(key, value, "native or kieker");
    return "";
  }
  if (key == "tcp_host") {
    c.tcp_host = value;
    return "";
  }
  if (key == "patterns") {
    c.patterns = value;
    return "";
  }
  if (key == "flight_context_model") {
    c.flight_context_model = value;
    return "";
  }
  if (key == "flight_context_score") {
    const std::string text(value);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !(v > 0 && v <= 1000)) {
      return bad(key, value, "a number above 0, at most 1000");
    }
    c.flight_context_score = v;
    return "";
  }
  if (key == "trace_start") {
    c.trace_start = value;
    return "";
  }
  if (key == "patterns_file") {
    c.patterns_file = value;
    return "";
  }
  if (key == "samplers") {
    c.samplers = split_list(value);
    return "";
  }
  if (key == "hostname") {
    c.hostname = value;
    return "";
  }
  if (key == "application") {
    c.application = value;
    return "";
  }
  return "unknown config key '" + std::string(key) + "'";
}

std::string apply_config_text(Config& c, std::string_view text, std::string_view origin) {
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string_view l = trim(line);
    if (l.empty() || l.front() == '#') continue;
    size_t eq = l.find('=');
    std::string where = std::string(origin) + ":" + std::to_string(number) + ": ";
    if (eq == std::string_view::npos)
      return where + "expected 'key = value', got '" + std::string(l) + "'";
    std::string err = apply_config(c, trim(l.substr(0, eq)), l.substr(eq + 1));
    if (!err.empty()) return where + err;
  }
  return "";
}

uint32_t flight_ring_buffers(const Config& c) {
  const uint64_t events = uint64_t{c.flight_ring_kib} * 1024 / sizeof(uint64_t[2]);
  return static_cast<uint32_t>((events + c.buffer_events - 1) / c.buffer_events);
}

std::string check_config(const Config& c) {
  if (!c.flight) {
    if (!c.flight_context_model.empty()) return "flight_context_model needs flight = on";
    return "";
  }
  // A thread needs its ring's buffers plus buffers_per_thread to fill while
  // the writer holds the ring; the writer gives buffers back through a ring
  // of 64 (buffer.hpp), which bounds both together.
  const uint64_t held = flight_ring_buffers(c);
  if (held + c.buffers_per_thread > 64) {
    return "flight_ring_kib " + std::to_string(c.flight_ring_kib) + " holds " +
           std::to_string(held) + " buffers of buffer_events " + std::to_string(c.buffer_events) +
           "; with buffers_per_thread " + std::to_string(c.buffers_per_thread) +
           " that is more than 64 per thread: lower flight_ring_kib or raise buffer_events";
  }
  if (c.writer != WriterKind::kNative)
    return "flight = on writes native snapshots: writer must be native";
  if (c.synchronous) return "flight = on needs mode = async (the writer thread holds the rings)";
  return "";
}

std::string load_config(Config& c) {
  std::string path;
  if (const char* p = std::getenv("SONDE_CONFIG"); p != nullptr && *p != '\0') {
    path = p;
    std::ifstream in(path);
    if (!in) return "cannot read config file " + path + " (from SONDE_CONFIG)";
  } else if (std::ifstream probe("sonde.conf"); probe) {
    path = "sonde.conf";
  }
  if (!path.empty()) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (std::string err = apply_config_text(c, text.str(), path); !err.empty()) return err;
  }
  // SONDE_<KEY> overrides the file. Not keys: SONDE_CONFIG itself, and
  // SONDE_CULL_CACHE, where `sonde run --cull` keeps what it culled
  // (docs/cull.md), which a monitored program inherits.
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.substr(0, 6) != "SONDE_") continue;
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key(entry.substr(6, eq - 6));
    if (key == "CONFIG" || key == "CULL_CACHE") continue;
    for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string err = apply_config(c, key, entry.substr(eq + 1));
    if (!err.empty())
      return "environment SONDE_" + std::string(entry.substr(6, eq - 6)) + ": " + err;
  }
  return check_config(c);
}

}  // namespace sonde::monitor
