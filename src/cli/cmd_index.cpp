// `sonde index LOG --out DIR`: builds the embedded store's index
// (DIR/index.sqlite, docs/formats/store.md; or ClickHouse tables with a
// clickhouse://HOST:PORT/DATABASE --out) from an existing log, so
// `sonde serve DIR` can search it like a collector's store.
//
// Exit status: 0 ok; 1 the log cannot be read or the index cannot be
// written; 2 usage.
#include <iostream>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "store/index_build.hpp"
#include "store/index_sink.hpp"

namespace sonde::cli {
namespace {

struct IndexArgs {
  std::string log;
  std::string out;
  bool repair = false;
};

int run_index(const IndexArgs& a) {
  analysis::ReconstructionOptions options;
  options.repair_event_traces = a.repair;
  const store::IndexBuildResult r = store::build_index_from_log(a.log, a.out, options);
  for (const std::string& w : r.warnings) std::cerr << "sonde index: warning: " << w << "\n";
  if (!r.error.empty()) {
    std::cerr << "sonde index: " << r.error << "\n";
    return 1;
  }
  std::cerr << "sonde index: " << r.records << " records, " << r.traces << " traces ("
            << r.invalid_traces << " invalid) indexed into "
            << (store::is_clickhouse_url(a.out) ? a.out : a.out + "/index.sqlite") << "\n";
  return 0;
}

void setup_index(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<IndexArgs>();
  app.add_option("LOG", a->log, "The log to index (native, Kieker directory, OPEN.xtrace)")
      ->required();
  app.add_option("--out,-o", a->out,
                 "The store: a directory (created if missing; an existing index is appended "
                 "to) or clickhouse://HOST:PORT/DATABASE")
      ->type_name("DIR|URL")
      ->required();
  app.add_flag("--repair", a->repair,
               "Synthesise missing after events, as `sonde summary --repair`");
  app.footer(
      "Exit status: 0 ok, 1 the log cannot be read or the index cannot be written, 2 usage.");
  app.callback([a, &exit_code] { exit_code = run_index(*a); });
}

}  // namespace

SONDE_COMMAND("index", "Build a store's SQLite index of traces from a log (for `sonde serve`)",
              setup_index);

}  // namespace sonde::cli
