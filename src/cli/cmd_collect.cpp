// `sonde collect --listen HOST:PORT --out DIR`: the collector. Receives
// records from any number of monitored processes (sonde's tcp writer,
// Kieker's SingleSocketTcpWriter), reconstructs their traces live and
// stores them in DIR (native logs + index.sqlite, docs/collect.md) or in
// ClickHouse (--out clickhouse://HOST:PORT/DATABASE). Runs
// until SIGINT/SIGTERM or until --connections connections have closed;
// prints per-client counts on exit and keeps them in DIR/collect-stats.json.
//
// Exit status: 0 ok (a client that broke the protocol is reported, not
// fatal: the collector keeps serving the others); 1 cannot listen or cannot
// store; 2 usage.
#include <sys/resource.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "analysis/text/duration_format.hpp"
#include "cli/command.hpp"
#include "cli/stop_on_signal.hpp"
#include "collect/collector.hpp"
#include "store/clickhouse_client.hpp"
#include "store/clickhouse_writer.hpp"

namespace sonde::cli {
namespace {

// The collector's own CPU time (every thread), which bench/collect_throughput.sh
// reports per million records: on a machine the senders share, wall time
// alone says little about what ingest costs.
void print_cpu_time(uint64_t records) {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return;
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  const double user = seconds(usage.ru_utime), system = seconds(usage.ru_stime);
  char line[200];
  std::snprintf(line, sizeof line, "sonde collect: cpu: %.2f s user + %.2f s system", user, system);
  std::cerr << line;
  if (records > 0) {
    std::snprintf(line, sizeof line, " (%.3f CPU-s per million records)",
                  (user + system) * 1e6 / static_cast<double>(records));
    std::cerr << line;
  }
  std::cerr << ", peak RSS " << usage.ru_maxrss / 1024 << " MiB\n";
}

struct CollectArgs {
  std::string listen = "127.0.0.1:10133";
  std::string out;
  std::string connections = "0";
  std::string max_clients = "256";
  std::string max_open_traces = "10000";
  std::string trace_timeout = "30s";
  std::string log_dir;
  std::string reduce;  // window; "" = no reduction
  std::string drain_timeout = "5m";
  std::string reduce_shapes = "10000";
  std::string commit_interval = "500ms";
  std::string forward;            // otlp://HOST:PORT; "" = none
  std::string forward_min = "0";  // also spans at least this long (0: roots only)
  std::string forward_service;    // service.name; "" = the host
  std::string collector_id;       // "" = 0, a single collector
  std::string workers = "1";
  std::string max_backlog_mib = "64";
  std::string kieker_log_codec = "lz4";
};

int run_collect(const CollectArgs& a) {
  collect::CollectorOptions options;
  const size_t colon = a.listen.rfind(':');
  if (colon == std::string::npos || colon == 0 ||
      !parse_number(a.listen.substr(colon + 1), &options.listen.port)) {
    std::cerr << "sonde collect: --listen needs HOST:PORT (e.g. 127.0.0.1:10133, port 0 = any "
                 "free port), got '"
              << a.listen << "'\n";
    return kUsage;
  }
  options.listen.bind_address = a.listen.substr(0, colon);
  if (!parse_number(a.connections, &options.listen.stop_after_connections)) {
    std::cerr << "sonde collect: --connections needs a number, got '" << a.connections << "'\n";
    return kUsage;
  }
  if (!parse_number(a.max_clients, &options.listen.max_connections) ||
      options.listen.max_connections == 0) {
    std::cerr << "sonde collect: --max-clients needs a positive number, got '" << a.max_clients
              << "'\n";
    return kUsage;
  }
  if (!parse_number(a.max_open_traces, &options.max_open_traces) || options.max_open_traces == 0) {
    std::cerr << "sonde collect: --max-open-traces needs a positive number, got '"
              << a.max_open_traces << "'\n";
    return kUsage;
  }
  if (!analysis::parse_duration(a.trace_timeout, &options.trace_timeout_ns)) {
    std::cerr << "sonde collect: --trace-timeout needs a duration such as 30s or 500ms, got '"
              << a.trace_timeout << "'\n";
    return kUsage;
  }
  int64_t drain_ns = 0;
  if (!analysis::parse_duration(a.drain_timeout, &drain_ns) || drain_ns < 0) {
    std::cerr << "sonde collect: --drain-timeout needs a duration such as 5m or 30s, got '"
              << a.drain_timeout << "'\n";
    return kUsage;
  }
  options.listen.drain_timeout = std::chrono::milliseconds(drain_ns / 1'000'000);
  int64_t commit_ns = 0;
  if (!analysis::parse_duration(a.commit_interval, &commit_ns) || commit_ns < 1'000'000) {
    std::cerr << "sonde collect: --commit-interval needs a duration of at least 1ms such as "
                 "500ms, got '"
              << a.commit_interval << "'\n";
    return kUsage;
  }
  options.commit_interval = std::chrono::milliseconds(commit_ns / 1'000'000);
  if (!parse_number(a.workers, &options.workers) || options.workers == 0 || options.workers > 256) {
    std::cerr << "sonde collect: --workers needs a number from 1 to 256, got '" << a.workers
              << "'\n";
    return kUsage;
  }
  uint64_t backlog_mib = 0;
  if (!parse_number(a.max_backlog_mib, &backlog_mib) || backlog_mib == 0 ||
      backlog_mib > (uint64_t{1} << 30)) {
    std::cerr << "sonde collect: --max-backlog needs a positive number of MiB, got '"
              << a.max_backlog_mib << "'\n";
    return kUsage;
  }
  options.max_backlog_bytes = backlog_mib << 20;
  if (a.kieker_log_codec == "lz4") {
    options.kieker_log_codec = format::native::Codec::kLz4;
  } else if (a.kieker_log_codec == "zstd") {
    options.kieker_log_codec = format::native::Codec::kZstd;
  } else if (a.kieker_log_codec == "none") {
    options.kieker_log_codec = format::native::Codec::kNone;
  } else {
    std::cerr << "sonde collect: --kieker-log-codec needs lz4, zstd or none, got '"
              << a.kieker_log_codec << "'\n";
    return kUsage;
  }
  if (!a.reduce.empty()) {
    options.reduce = true;
    if (!analysis::parse_duration(a.reduce, &options.reduction.window_ns) ||
        options.reduction.window_ns <= 0) {
      std::cerr << "sonde collect: --reduce needs a positive window such as 1s or 200ms, got '"
                << a.reduce << "'\n";
      return kUsage;
    }
    if (store::is_clickhouse_url(a.out)) {
      std::cerr << "sonde collect: --reduce works with the embedded store (a directory) only\n";
      return kUsage;
    }
  }
  if (!parse_number(a.reduce_shapes, &options.reduction.max_shapes) ||
      options.reduction.max_shapes == 0) {
    std::cerr << "sonde collect: --reduce-shapes needs a positive number, got '" << a.reduce_shapes
              << "'\n";
    return kUsage;
  }
  if (a.out.empty()) {
    std::cerr << "sonde collect: missing --out (the store directory)\n";
    return kUsage;
  }
  if (store::is_clickhouse_url(a.out)) {
    store::ClickHouseUrl url;
    if (const std::string e = store::parse_clickhouse_url(a.out, &url); !e.empty()) {
      std::cerr << "sonde collect: --out " << e << "\n";
      return kUsage;
    }
    options.log_dir = a.log_dir;
  } else if (!a.log_dir.empty()) {
    std::cerr << "sonde collect: --log-dir is for a ClickHouse --out; a directory store keeps "
                 "its logs inside\n";
    return kUsage;
  }
  if (!a.collector_id.empty()) {
    uint64_t id = 0;
    if (!parse_number(a.collector_id, &id) || id > store::ClickHouseWriter::kMaxCollectorId) {
      std::cerr << "sonde collect: --collector-id needs a number from 0 to "
                << store::ClickHouseWriter::kMaxCollectorId << ", got '" << a.collector_id << "'\n";
      return kUsage;
    }
    if (!store::is_clickhouse_url(a.out)) {
      std::cerr << "sonde collect: --collector-id is for several collectors writing one "
                   "ClickHouse database (--out clickhouse://...); a directory store has one "
                   "collector\n";
      return kUsage;
    }
    options.collector_id = static_cast<uint32_t>(id);
  }
  options.out = a.out;
  if (!a.forward.empty()) {
    collect::OtlpForwardOptions forward;
    if (const std::string e = collect::parse_otlp_target(a.forward, forward); !e.empty()) {
      std::cerr << "sonde collect: --forward: " << e << "\n";
      return kUsage;
    }
    int64_t min_ns = 0;
    if (!analysis::parse_duration(a.forward_min, &min_ns) || min_ns < 0) {
      std::cerr << "sonde collect: --forward-min: not a duration '" << a.forward_min << "'\n";
      return kUsage;
    }
    forward.spans.min_duration_ns = min_ns;
    forward.resource.service_name = a.forward_service;
    options.forward = forward;
  }
  if (options.listen.bind_address.rfind("127.", 0) != 0) {
    std::cerr << "sonde collect: warning: listening on " << options.listen.bind_address
              << ": anyone who can reach it can write into the store\n";
  }

  collect::Collector collector(options);
  if (const std::string error = collector.open(); !error.empty()) {
    std::cerr << "sonde collect: " << error << "\n";
    return kFailed;
  }
  std::atomic<bool>& stop = stop_on_interrupt_or_terminate();
  // Tests and scripts read the port from this line (useful with port 0).
  std::cerr << "sonde collect: listening on " << options.listen.bind_address << ":"
            << collector.port() << ", storing into " << a.out << std::endl;
  collector.run(stop);
  const std::string error = collector.finish();

  const std::vector<collect::ClientReport> listed = collector.clients();
  for (const collect::ClientReport& c : listed) {
    const store::ClientRecord& r = c.record;
    std::cerr << "sonde collect: client " << r.id << " (" << r.peer << "): " << r.received
              << " received, " << r.stored << " stored, " << r.rejected << " rejected, " << c.traces
              << " traces (" << c.invalid_traces << " invalid)";
    if (options.reduce) std::cerr << " in " << c.reduced_traces << " reduced traces";
    if (!r.error.empty()) {
      std::cerr << "; closed: " << r.error << " (" << r.undecoded_bytes << " bytes not decoded)";
    }
    std::cerr << "\n";
  }
  const collect::ClientTotals totals = collector.totals();
  if (totals.clients > listed.size()) {
    std::cerr << "sonde collect: " << totals.clients - listed.size()
              << " earlier clients not listed (each one's counts are in the store's clients"
                 " table; the total below counts them)\n";
  }
  const uint64_t received = totals.received, stored = totals.stored, rejected = totals.rejected,
                 traces = totals.traces, invalid = totals.invalid_traces,
                 reduced = totals.reduced_traces;
  if (collector.unserved_connections() > 0) {
    std::cerr << "sonde collect: warning: " << collector.unserved_connections()
              << " connections still waiting for one of the " << options.listen.max_connections
              << " slots (--max-clients) when the collector stopped were not read ("
              << collector.unserved_bytes() << " bytes they had sent are lost)\n";
  }
  std::cerr << "sonde collect: total: " << received << " received, " << stored << " stored, "
            << rejected << " rejected, " << traces << " traces (" << invalid << " invalid)";
  if (options.reduce) std::cerr << " in " << reduced << " reduced traces";
  if (!collector.stats_path().empty()) std::cerr << "; stats in " << collector.stats_path();
  std::cerr << "\n";
  if (collector.peak_backlog_bytes() > 0) {
    char mib[32];
    std::snprintf(mib, sizeof mib, "%.1f",
                  static_cast<double>(collector.peak_backlog_bytes()) / (1 << 20));
    std::cerr << "sonde collect: the analysis lagged behind receiving by at most " << mib
              << " MiB of log (--max-backlog " << a.max_backlog_mib << ")\n";
  }
  print_cpu_time(received);
  if (options.forward) {
    const collect::OtlpForwardStats f = collector.forward_stats();
    std::cerr << "sonde collect: forwarded to otlp://" << options.forward->host << ":"
              << options.forward->port << options.forward->path << ": " << f.spans_queued
              << " spans queued, " << f.spans_exported << " exported, " << f.spans_rejected
              << " rejected, " << f.spans_failed << " failed, " << f.spans_dropped
              << " dropped (queue full); " << f.requests << " requests, " << f.retries
              << " retries\n";
    if (!f.last_error.empty()) std::cerr << "sonde collect: warning: " << f.last_error << "\n";
  }
  if (!error.empty()) {
    std::cerr << "sonde collect: error: " << error << "\n";
    return kFailed;
  }
  return kOk;
}

void setup_collect(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<CollectArgs>();
  app.add_option("--listen,-l", a->listen,
                 "Address and port to listen on (default 127.0.0.1:10133; port 0 = any free)")
      ->type_name("HOST:PORT");
  app.add_option("--out,-o", a->out,
                 "The store: a directory (created if missing) or "
                 "clickhouse://HOST:PORT/DATABASE")
      ->type_name("DIR|URL");
  app.add_option("--collector-id", a->collector_id,
                 "With a ClickHouse --out written by several collectors: this collector's id "
                 "(0-65535), each collector its own; it owns a range of row and client ids")
      ->type_name("N");
  app.add_option("--log-dir", a->log_dir,
                 "With a ClickHouse --out: also keep the native logs and stats file here")
      ->type_name("DIR");
  app.add_option("--connections", a->connections,
                 "Stop after N connections have closed (default 0: run until SIGINT/SIGTERM)")
      ->type_name("N");
  app.add_option("--max-clients", a->max_clients,
                 "Connections served at once; more wait in the kernel's queue until one closes "
                 "(default 256)")
      ->type_name("N");
  app.add_option("--max-open-traces", a->max_open_traces,
                 "Open traces per connection before the oldest is closed as invalid (default "
                 "10000)")
      ->type_name("N");
  app.add_option("--trace-timeout", a->trace_timeout,
                 "Close a trace without records for this long, in log time (default 30s)")
      ->type_name("DURATION");
  app.add_option("--drain-timeout", a->drain_timeout,
                 "On SIGINT/SIGTERM, read what clients already sent for at most this long "
                 "(default 5m; it also ends once nothing arrived for 10 s)")
      ->type_name("DURATION");
  app.add_option("--commit-interval", a->commit_interval,
                 "How often new traces become visible in the index and the stats file is "
                 "rewritten (default 500ms)")
      ->type_name("DURATION");
  app.add_option("--workers", a->workers,
                 "Analysis threads reconstructing and indexing the clients' traces from their "
                 "logs, each client on one (default 1)")
      ->type_name("N");
  app.add_option("--max-backlog", a->max_backlog_mib,
                 "MiB of stored log not yet analysed, over all clients, past which receiving "
                 "waits for the workers (default 64)")
      ->type_name("MIB");
  app.add_option("--kieker-log-codec", a->kieker_log_codec,
                 "How the logs compress what arrives in Kieker's protocol: lz4 (default; "
                 "fastest), zstd (about half the size, more CPU) or none. A native stream's "
                 "chunks are kept as the sender compressed them")
      ->type_name("lz4|zstd|none");
  app.add_option("--forward", a->forward,
                 "Also send request-level spans to an OTLP/HTTP receiver: otlp://HOST:PORT[/PATH] "
                 "(protobuf, POST /v1/traces)");
  app.add_option("--forward-min", a->forward_min,
                 "With --forward: also every execution lasting at least this long (e.g. 10ms; "
                 "default 0: only each trace's root executions)");
  app.add_option("--forward-service", a->forward_service,
                 "With --forward: service.name of the spans (default: their host)");
  app.add_option("--reduce", a->reduce,
                 "Trace reduction: store one reduced trace per shape and window of this much "
                 "log time (e.g. 1s) instead of every trace; logs still keep every record")
      ->type_name("WINDOW");
  app.add_option("--reduce-shapes", a->reduce_shapes,
                 "With --reduce: distinct shapes per window per connection before the window "
                 "closes early (default 10000)")
      ->type_name("N");
  app.footer(
      "Exit status: 0 ok (clients that broke the protocol are reported), 1 cannot listen or "
      "cannot store, 2 usage error.");
  app.callback([a, &exit_code] { exit_code = run_collect(*a); });
}

}  // namespace

SONDE_COMMAND("collect",
              "Receive records from monitored processes and store their traces (logs + SQLite "
              "index)",
              setup_collect);

}  // namespace sonde::cli
