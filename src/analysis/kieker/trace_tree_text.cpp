#include "analysis/kieker/trace_tree_text.hpp"

#include <string>

#include "analysis/model/call_tree.hpp"
#include "analysis/text/duration_format.hpp"
#include "analysis/text/text_table.hpp"

namespace sonde::analysis {

void write_trace_tree(std::ostream& out, const Trace& trace) {
  out << "Trace " << trace.trace_id;
  if (!trace.host.empty()) out << " on " << trace.host;
  if (trace.thread_id >= 0) out << ", thread " << trace.thread_id;
  if (trace.parent_trace_id >= 0 && trace.parent_trace_id != trace.trace_id) {
    out << ", continues trace " << trace.parent_trace_id << " at order index "
        << trace.parent_order_id;
  }
  out << ": " << trace.executions.size() << " executions, "
      << format_duration(static_cast<double>(trace.duration())) << "\n\n";

  const CallTree tree = build_call_tree(trace);
  const std::vector<int64_t> exclusive = exclusive_durations(trace, tree);
  TextTable table({"inclusive", "exclusive", "start", "operation"});
  const int64_t t0 = trace.start_time();
  for (size_t i = 0; i < trace.executions.size(); ++i) {
    const Execution& e = trace.executions[i];
    // Deep traces stay readable: past 40 levels the depth is written as a number.
    const int depth = e.ess < 0 ? 0 : e.ess;
    std::string name = depth <= 40 ? std::string(static_cast<size_t>(depth) * 2, ' ')
                                   : "[" + std::to_string(depth) + "] ";
    name += e.operation;
    if (e.failed) name += "  ✗ " + std::string(e.cause);
    if (e.repaired) name += "  (exit repaired)";
    table.add_row({format_duration(static_cast<double>(e.duration())),
                   format_duration(static_cast<double>(exclusive[i])),
                   "+" + format_duration(static_cast<double>(e.tin - t0)), name});
  }
  table.write(out);
}

}  // namespace sonde::analysis
