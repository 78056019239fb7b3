// Monitoring configuration: built-in defaults, then a config file
// (SONDE_CONFIG or ./sonde.conf), then SONDE_<KEY> environment variables.
// Every key is documented in docs/configuration.md. A bad key or value is an
// error that names it; the controller then disables monitoring and the
// program runs on unmonitored.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::monitor {

enum class WriterKind { kNative, kKiekerDat, kKiekerBin, kTcp, kNull };
enum class TcpProtocol { kNative, kKieker };
enum class FullPolicy { kBlock, kDrop };
enum class ForkPolicy { kFollow, kStop };
enum class TimerChoice { kAuto, kTsc, kMonotonic };

struct Config {
  bool enabled = true;
  std::string out_dir = "sonde-logs";
  WriterKind writer = WriterKind::kNative;
  bool synchronous = false;  // write from the probing thread at each buffer hand-off
  FullPolicy policy = FullPolicy::kBlock;
  uint32_t buffer_events = 16384;  // events per buffer (16 bytes each)
  uint32_t buffers_per_thread = 8;
  // Buffers any thread may take beyond buffers_per_thread while the writer
  // is behind (process-wide, kept once taken): a burst, such as the writer
  // resolving a new program's function names at start-up, fills these
  // instead of making probes wait.
  uint32_t burst_buffers = 128;
  uint32_t block_timeout_ms = 10000;  // block policy: longest wait before dropping (never deadlock)
  TimerChoice timer = TimerChoice::kAuto;
  // zstd | lz4 | none. lz4 by default: under stress the writer thread's
  // cost per event decides whether probes wait, and lz4 costs less than
  // zstd per event there (docs/PERFORMANCE.md); zstd halves the log.
  std::string compression = "lz4";
  int compression_level = 1;
  std::string tcp_host = "127.0.0.1";
  uint16_t tcp_port = 10133;
  uint32_t tcp_retry_ms = 500;  // first reconnect delay; doubles up to tcp_retry_max_ms
  uint32_t tcp_retry_max_ms = 8000;
  uint32_t tcp_buffer_bytes = 16u << 20;  // bytes kept while the peer is away; beyond: counted loss
  // native: sonde's chunk stream, confirmed by `sonde collect` (nothing is
  // let go before it is stored); kieker: Kieker's TCP frames, for Kieker's
  // own collector.
  TcpProtocol tcp_protocol = TcpProtocol::kNative;
  uint32_t tcp_exit_wait_ms = 3000;  // at exit: longest wait for an absent receiver
  // Functions (globs, as in `patterns`) whose entry starts a trace; frames
  // outside any such function are not recorded. Empty: a trace starts at
  // every outermost monitored call (docs/configuration.md).
  std::string trace_start;
  // SIGTERM, SIGINT and SIGHUP: flush, close the log, then let the signal
  // do what it would have done (the program's handler or its default).
  bool stop_signals = true;
  // Fault injection for tests of the block policy's bound: the writer thread
  // sleeps this long before its first write, as a hung disk would stall it.
  uint32_t fault_writer_stall_ms = 0;
  std::string patterns;       // inline "+a;-b" rules
  std::string patterns_file;  // Kieker-style adaptive monitoring file
  uint32_t patterns_reload_ms = 1000;
  std::vector<std::string> samplers;  // cpu, memory, process, network, disk, all
  uint32_t sampler_period_ms = 1000;
  uint32_t flush_interval_ms = 1000;  // partial buffers of idle threads reach the log this often
  ForkPolicy fork = ForkPolicy::kFollow;
  uint32_t crash_flush_timeout_ms = 2000;
  uint32_t kieker_max_entries_per_file = 25000;
  std::string kieker_compression = "none";  // none | gzip | zlib | xz | bzip2 | zip
  std::string hostname;                     // default: gethostname()
  std::string application;                  // default: program name
  bool xray = true;     // xray = auto | off: patch clang -fxray-instrument sleds by pattern
  bool summary = true;  // print a one-line summary to stderr at exit
  // Automatic overhead culling (docs/cull.md): a first phase observes every
  // monitored call, then functions called often whose own mean duration is
  // short next to the probe's cost are excluded for the rest of the run.
  bool cull = false;                      // cull = off | auto
  uint32_t cull_phase_calls = 100000;     // the phase ends after this many monitored calls…
  uint32_t cull_phase_ms = 500;           // …or this long, whichever comes first
  uint32_t cull_rounds = 0;               // windows like it to decide in; 0: for the whole run
  uint32_t cull_min_calls = 100;          // culled only with at least this many calls in the phase
  uint32_t cull_min_rate = 1000;          // … and at least this many calls per second
  uint32_t cull_max_ns = 2000;            // … and an own mean duration below this
  uint32_t cull_probe_ns = 20;            // cost of one monitored call (enter + exit), ns
  uint32_t cull_leaf_instructions = 200;  // straight-line leaves up to this size: culled at once
  uint32_t cull_early_percent =
      25;  // own mean below this % of cull_max_ns at cull_min_calls: culled then
  // Excluded functions' -finstrument-functions hook calls are overwritten
  // with NOPs where that can be done with one atomic store (callsite_patch.hpp).
  bool patch_call_sites = true;
  // Source file and line of each function in the log's OPERATION items:
  // off by default, as reading DWARF line tables stalls the writer at a
  // program's start (docs/configuration.md).
  bool source_lines = false;
  // Probes for unmodified programs (docs/probes.md): interposed library
  // calls that write diagnostic records. All off by default; probes_file
  // switches them at run time.
  bool probe_lock_wait = false;               // pthread_mutex_lock waits
  uint32_t probe_lock_wait_threshold_ns = 0;  // record waits at least this long
  bool probe_database = false;                // SQLite, sonde_record_database_call
  bool probe_messaging = false;               // sonde_record_message_send
  std::string probes_file;                    // probe_* keys, re-read when it changes
  uint32_t probe_queue_records = 16384;       // pending diagnostic records before loss
  // Flight recorder (docs/flight-recorder.md): each thread's newest events
  // stay in memory and nothing is written until a snapshot is asked for
  // (signal, sonde_snapshot(), a trigger).
  bool flight = false;
  uint32_t flight_ring_kib = 4096;         // per thread
  uint32_t flight_window_ms = 10000;       // a snapshot's span back from its instant
  uint32_t flight_signal = 12;             // SIGUSR2 asks for a snapshot; 0: none
  uint32_t flight_slow_trace_ms = 0;       // trigger: a trace at least this long (0: off)
  uint32_t flight_min_interval_ms = 5000;  // triggers: at most one snapshot per interval
  uint32_t flight_max_snapshots = 100;     // then further requests are counted, not written
  // Trigger: an execution scoring above flight_context_score against a
  // saved calling-context model (`sonde context --save-model`; "" = off).
  std::string flight_context_model;
  double flight_context_score = 3;  // Tukey's "far out", as `sonde context --anomalies`
  // ... and at least this far above its context's third quartile: the
  // score alone flags nanosecond jitter of tiny functions (a 1-ns scale).
  uint32_t flight_context_min_excess_us = 1000;
};

// Checks that keys agree with each other (after all are applied).
// Returns "" or an error naming the keys.
std::string check_config(const Config& c);
// Buffers a flight-recorder thread holds: its ring in buffers, rounded up.
uint32_t flight_ring_buffers(const Config& c);

struct ConfigKey {
  std::string_view name;
  std::string_view description;
};
const std::vector<ConfigKey>& config_keys();

// Applies one key. Returns "" or an error naming the key and the bad value.
std::string apply_config(Config& c, std::string_view key, std::string_view value);

// Parses `key = value` lines ('#' comments). Returns "" or the first error,
// naming the file and line.
std::string apply_config_text(Config& c, std::string_view text, std::string_view origin);

// Loads defaults, the config file and the environment. Returns "" or the first error.
std::string load_config(Config& c);

}  // namespace sonde::monitor
