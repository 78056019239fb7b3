// Builds Traces directly (no records) for tests of what consumes traces:
// "main(a()b())" is main calling a then b. Order indexes count before and
// after events as Kieker does; event k happens at time start + 10 * k.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis::testing {

inline Trace flow_trace(int64_t id, const std::string& calls, int64_t start = 0,
                        int64_t parent_id = -2, int32_t parent_order = -1,
                        std::string_view host = "host") {
  // Names live in a static pool: the views must outlive the trace.
  static std::deque<std::string>* names = new std::deque<std::string>();  // never moves
  Trace t;
  t.trace_id = id;
  t.thread_id = 1;
  t.host = host;
  t.parent_trace_id = parent_id == -2 ? id : parent_id;
  t.parent_order_id = parent_order;
  std::vector<size_t> stack;
  int32_t order = 0;
  std::string name;
  for (char c : calls) {
    if (c == '(') {
      names->push_back(name);
      Execution x;
      x.operation = names->back();
      x.component = "C";
      x.host = host;
      x.order_index = order;
      x.tin = start + 10 * order++;
      x.eoi = static_cast<int32_t>(t.executions.size());
      x.ess = static_cast<int32_t>(stack.size());
      stack.push_back(t.executions.size());
      t.executions.push_back(x);
      name.clear();
    } else if (c == ')') {
      Execution& x = t.executions[stack.back()];
      stack.pop_back();
      x.exit_order_index = order;
      x.tout = start + 10 * order++;
    } else {
      name.push_back(c);
    }
  }
  return t;
}

}  // namespace sonde::analysis::testing
