// Kieker filesystem logs in text form: a kieker.map and a .dat file (plain
// or compressed: the reader detects gzip/zlib/xz/bzip2/zip by magic bytes),
// read and reconstructed into traces as `sonde summary` would.
#include "analysis/trace_analysis.hpp"
#include "format/log_reader.hpp"
#include "fuzz_input_file.hpp"

namespace {
// Ids used by the seed corpus (shared/testdata/kieker/*/kieker.map).
constexpr std::string_view kDefaultMap =
    "$0=kieker.common.record.flow.trace.TraceMetadata\n"
    "$1=kieker.common.record.flow.trace.operation.BeforeOperationEvent\n"
    "$2=kieker.common.record.flow.trace.operation.AfterOperationEvent\n"
    "$3=kieker.common.record.controlflow.OperationExecutionRecord\n"
    "$4=kieker.common.record.flow.trace.operation.AfterOperationFailedEvent\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [map, dat] = sonde::fuzz::split_at_nul(data, size, kDefaultMap);
  sonde::fuzz::write_file("kieker.map", map);
  sonde::fuzz::write_file("kieker-20260101-000000000-UTC-001.dat", dat);
  sonde::analysis::TraceAnalysis analysis;
  sonde::format::read_kieker_directory(sonde::fuzz::scratch_dir().string(), analysis.records());
  analysis.finish();
  return 0;
}
