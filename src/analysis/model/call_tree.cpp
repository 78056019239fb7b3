#include "analysis/model/call_tree.hpp"

namespace sonde::analysis {

CallTree build_call_tree(const Trace& trace) {
  const size_t n = trace.executions.size();
  CallTree tree;
  tree.parent.assign(n, -1);
  tree.first_child.assign(n, -1);
  tree.next_sibling.assign(n, -1);

  std::vector<int32_t> open;  // the current call stack
  for (size_t i = 0; i < n; ++i) {
    const int32_t ess = trace.executions[i].ess;
    const size_t depth = ess < 0 ? 0 : static_cast<size_t>(ess);
    if (open.size() > depth) open.resize(depth);
    tree.parent[i] = open.empty() ? -1 : open.back();
    open.push_back(static_cast<int32_t>(i));
  }
  // Linking back to front keeps children in eoi order.
  for (size_t i = n; i-- > 0;) {
    const int32_t p = tree.parent[i];
    int32_t& head = p < 0 ? tree.first_root : tree.first_child[p];
    tree.next_sibling[i] = head;
    head = static_cast<int32_t>(i);
  }
  return tree;
}

std::vector<int64_t> exclusive_durations(const Trace& trace, const CallTree& tree) {
  const size_t n = trace.executions.size();
  std::vector<int64_t> exclusive(n);
  for (size_t i = 0; i < n; ++i) exclusive[i] = trace.executions[i].duration();
  for (size_t i = 0; i < n; ++i) {
    const int32_t p = tree.parent[i];
    if (p >= 0) exclusive[p] -= trace.executions[i].duration();
  }
  return exclusive;
}

}  // namespace sonde::analysis
