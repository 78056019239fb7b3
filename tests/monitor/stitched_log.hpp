// A log (or a folder of logs) read, reconstructed and stitched, as the
// analysis commands do, for tests of continued traces. The stitched
// traces' strings point into `strings`, which lives as long as this.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "analysis/reconstruct/trace_stitcher.hpp"
#include "format/log_reader.hpp"

namespace sonde::test {

struct StitchedTraces : analysis::StitchedTraceSink {
  void on_stitched_trace(const analysis::StitchedTrace& t) override { traces.push_back(t); }
  std::vector<analysis::StitchedTrace> traces;
};

struct StitchedLog {
  explicit StitchedLog(const std::string& path) {
    analysis::StitchingOptions options;
    options.child_timeout_ns = 0;  // everything at the end: the logs are small
    analysis::TraceStitcher stitcher(out, options);
    analysis::TraceReconstructor reconstructor(stitcher);
    read = format::read_log(path, reconstructor);
    reconstructor.finish();
    stitcher.finish();
    stats = stitcher.stats();
    strings = reconstructor.strings();
  }
  format::LogReadStats read;
  analysis::StitchingStats stats;
  StitchedTraces out;
  std::shared_ptr<format::StringPool> strings;
};

}  // namespace sonde::test
