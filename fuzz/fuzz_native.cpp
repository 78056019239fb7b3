// sonde's native log format: a .sonde file read and reconstructed into
// traces (the typed fast path), as `sonde traces` does.
#include "analysis/reconstruct/trace_analysis.hpp"
#include "format/log_reader.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = sonde::fuzz::write_file(
      "fuzz.sonde", std::string_view(reinterpret_cast<const char*>(data), size));
  sonde::analysis::TraceAnalysis analysis;
  sonde::format::read_native_as_records(path, analysis.records());
  analysis.finish();
  return 0;
}
