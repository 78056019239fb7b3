// Builds DIR/index.sqlite from an existing log (any format sonde reads), so
// `sonde serve DIR` can search a log that was not collected live, and the
// store tests can load real Kieker logs. Backs `sonde index LOG --out DIR`
// (or a ClickHouse URL).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/reconstruct/trace_reconstructor.hpp"

namespace sonde::store {

struct IndexBuildResult {
  std::string error;  // "" or what stopped the build (unreadable log, index not writable)
  std::vector<std::string> warnings;  // from reading the log (skipped records, ...)
  uint64_t records = 0;
  uint64_t traces = 0;
  uint64_t invalid_traces = 0;
};

// `out`: a directory (DIR/index.sqlite) or clickhouse://HOST:PORT/DATABASE.
IndexBuildResult build_index_from_log(const std::string& log, const std::string& out,
                                      const analysis::ReconstructionOptions& options = {});

}  // namespace sonde::store
