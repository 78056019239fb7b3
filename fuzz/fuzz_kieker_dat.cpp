// Kieker filesystem logs in text form: a kieker.map and a .dat file (plain
// or compressed: the reader detects gzip/zlib/xz/bzip2/zip by magic bytes),
// read and reconstructed into traces as `sonde summary` would.
#include "analysis/reconstruct/trace_analysis.hpp"
#include "format/log_reader.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sonde::fuzz::write_kieker_directory(data, size, "kieker-20260101-000000000-UTC-001.dat");
  sonde::analysis::TraceAnalysis analysis;
  sonde::format::read_kieker_directory(sonde::fuzz::scratch_dir().string(), analysis.records());
  analysis.finish();
  return 0;
}
