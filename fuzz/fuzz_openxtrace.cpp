// OPEN.xtrace JSON (both dialects): parsed, converted to records and
// reconstructed into traces.
#include <sstream>

#include "analysis/reconstruct/trace_analysis.hpp"
#include "format/openxtrace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  sonde::analysis::TraceAnalysis analysis;
  sonde::format::read_openxtrace(in, "fuzz.json", analysis.records());
  analysis.finish();
  return 0;
}
