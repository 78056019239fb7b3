// Kieker's text form of execution traces (executionTraces.txt): a header
// with the trace's time span, then one line per execution in eoi order:
//
//   TraceId 6488138950668976129 (minTin=1283156498770302094 (Mon, 30 Aug
//   2010 08:21:38.770 +0000 (UTC)); maxTout=...; maxEss=2):
//   <6488138950668976129[0,0] 1283156498770302094-1283156498820012272
//   SRV0::@3:bookstoreTracing.Bookstore.searchBook N/A>
//
// Names are printed as recorded, except that control characters and
// backslashes are escaped (text_escape) so that one execution stays one line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/kieker/kieker_trace.hpp"

namespace sonde::analysis {

// "Mon, 30 Aug 2010 08:21:38.770 +0000 (UTC)": ns since the epoch, in UTC,
// truncated to milliseconds (Java's "EEE, d MMM yyyy HH:mm:ss.SSS Z").
std::string kieker_utc_date(int64_t ns);

// A name for a line-oriented text file: '\' and control characters become
// C-style escapes ("\\", "\n", "\x01"); bytes that are not valid UTF-8 too.
std::string text_escape(std::string_view text);

// "6488138950668976129[1,1] 1283156498770900902-1283156498773404399
// SRV1::@1:bookstoreTracing.Catalog.getBook N/A" (+ " (assumed)").
std::string execution_text(const KiekerTrace& trace, size_t index, const KiekerSystemModel& model);

// The whole trace as Kieker's ExecutionTrace.toString, each line ending in
// '\n'. Kieker's writer adds one more '\n' after each trace.
std::string execution_trace_text(const KiekerTrace& trace, const KiekerSystemModel& model);

}  // namespace sonde::analysis
