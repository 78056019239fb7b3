// Kieker filesystem logs in binary form: a kieker.map and a .bin file, read
// and reconstructed into traces.
#include "analysis/reconstruct/trace_analysis.hpp"
#include "format/log_reader.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sonde::fuzz::write_kieker_directory(data, size, "kieker-20260101-000000000-UTC-001.bin");
  sonde::analysis::TraceAnalysis analysis;
  sonde::format::read_kieker_directory(sonde::fuzz::scratch_dir().string(), analysis.records());
  analysis.finish();
  return 0;
}
