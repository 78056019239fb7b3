// Shared by the kieker_parity_* tests: run sonde's Kieker outputs over a
// log (wired as `sonde trace-analysis` does) into memory, and read Kieker's
// golden files.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "analysis/kieker/kieker_record_filter.hpp"
#include "analysis/kieker/kieker_trace_analysis.hpp"
#include "analysis/model/trace_start_order.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "format/log_reader.hpp"

namespace sonde::analysis::parity {

namespace fs = std::filesystem;

inline const fs::path kKieker = fs::path(SONDE_TESTDATA_DIR) / "kieker";

inline fs::path golden_dir(const std::string& log) {
  return kKieker / log / "kieker-trace-analysis-output";
}

inline std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class MemoryFiles : public OutputFiles {
 public:
  bool write(const std::string& name, std::string_view content) override {
    files[name] = std::string(content);
    return true;
  }
  bool append(const std::string& name, std::string_view content) override {
    files[name] += content;
    return true;
  }
  std::map<std::string, std::string> files;
};

struct ParityRun {
  std::map<std::string, std::string> files;
  uint64_t traces = 0;
  uint64_t invalid = 0;
  format::LogReadStats read;
};

// The outputs of `options` for the log in tests/data/kieker/<log>/log.
inline ParityRun run_parity(const std::string& log, const KiekerOutputOptions& options,
                            std::unordered_set<int64_t> selected = {}) {
  MemoryFiles files;
  KiekerSystemModel model;
  KiekerTraceAnalysis outputs(options, model, files);
  TraceStartOrder ordered(outputs, 100'000);
  TraceReconstructor traces(ordered);
  KiekerRecordFilter filter(traces, model, std::move(selected));
  ParityRun run;
  run.read = format::read_log((kKieker / log / "log").string(), filter);
  traces.finish();
  ordered.flush();
  outputs.finish();
  run.files = std::move(files.files);
  run.traces = outputs.traces();
  run.invalid = outputs.invalid_traces();
  return run;
}

}  // namespace sonde::analysis::parity
