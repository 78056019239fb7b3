// Kieker filesystem logs in binary form: a kieker.map and a .bin file, read
// and reconstructed into traces.
#include "analysis/trace_analysis.hpp"
#include "format/log_reader.hpp"
#include "fuzz_input_file.hpp"

namespace {
constexpr std::string_view kDefaultMap =
    "$0=kieker.common.record.flow.trace.TraceMetadata\n"
    "$1=kieker.common.record.flow.trace.operation.BeforeOperationEvent\n"
    "$2=kieker.common.record.flow.trace.operation.AfterOperationEvent\n"
    "$3=kieker.common.record.controlflow.OperationExecutionRecord\n"
    "$4=kieker.common.record.flow.trace.operation.AfterOperationFailedEvent\n"
    "$5=kieker.common.record.flow.trace.operation.CallOperationEvent\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [map, bin] = sonde::fuzz::split_at_nul(data, size, kDefaultMap);
  sonde::fuzz::write_file("kieker.map", map);
  sonde::fuzz::write_file("kieker-20260101-000000000-UTC-001.bin", bin);
  sonde::analysis::TraceAnalysis analysis;
  sonde::format::read_kieker_directory(sonde::fuzz::scratch_dir().string(), analysis.records());
  analysis.finish();
  return 0;
}
