// Kieker's text form of message traces (messageTraces.txt):
//
//   Trace 6488138950668976129:
//   <SYNC-CALL 1283156498770302094 'Entry' --> <callee execution>>
//   <SYNC-RPLY 1283156498773404399 <callee execution> --> <caller execution>>
//
// with executions printed as in execution_trace_text.hpp.
#pragma once

#include <string>

#include "analysis/kieker/kieker_trace.hpp"

namespace sonde::analysis {

// Each line ends in '\n'; Kieker's writer adds one more after each trace.
std::string message_trace_text(const KiekerTrace& trace, const KiekerSystemModel& model);

}  // namespace sonde::analysis
