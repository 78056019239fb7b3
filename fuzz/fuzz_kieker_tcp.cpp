// Kieker's TCP stream as the collector receives it: the bytes arrive in
// arbitrary pieces (the first input byte chooses the piece size), and the
// decoded records go through trace reconstruction.
#include "analysis/reconstruct/trace_analysis.hpp"
#include "format/kieker_tcp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 64;
  sonde::analysis::TraceAnalysis analysis;
  sonde::format::kieker::TcpDecoder decoder("fuzz");
  bool ok = true;
  for (size_t at = 1; ok && at < size; at += piece)
    ok = decoder.feed(data + at, std::min(piece, size - at), analysis.records());
  if (ok) decoder.finish();
  analysis.finish();
  return 0;
}
