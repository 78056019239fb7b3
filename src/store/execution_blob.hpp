// The executions of one stored trace, packed into one BLOB of the embedded
// index (table `trace_executions`, docs/formats/store.md): one row per trace
// instead of one per execution keeps the collector's index writes to a
// handful of B-tree inserts per trace. Strings (operation, component, host,
// cause) are ids into the index's `names` table; times are deltas.
//
// Per execution, LEB128 varints (s: zigzag-signed):
//   flags (bit 0: failed, bit 1: exit never seen), operation id,
//   component id, host id, s eoi, s ess, s (tin - previous tin, the first
//   against 0), [s (tout - tin) unless bit 1], [cause id if bit 0]
// Name id 0 is the empty string.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/trace_model.hpp"
#include "analysis/reconstruct/trace_reducer.hpp"
#include "store/trace_store.hpp"

namespace sonde::store {

// Appends the packed executions to `out`; `name_id` gives a name's id
// (creating it if new; never called for ""). `operation_ids`, if given,
// receives each execution's operation id, in order (the index writer's
// aggregates need them too).
// The first execution's entry time is written relative to `base_tin`
// (the trace's start in the index; 0 writes it whole).
void pack_executions(std::span<const analysis::Execution> executions,
                     const std::function<uint64_t(std::string_view)>& name_id, std::string& out,
                     std::vector<uint64_t>* operation_ids = nullptr, int64_t base_tin = 0);

// Unpacks `blob` into `out`. `name_of` returns the text of an id, or null
// for an id it does not know. Returns "" or what is wrong (truncated,
// unknown name id, trailing bytes), with the byte offset.
std::string unpack_executions(std::string_view blob,
                              const std::function<const std::string*(uint64_t)>& name_of,
                              std::vector<StoredExecution>& out, int64_t base_tin = 0);

// The call positions of a reduced trace (table `reduced_traces`), per
// position: operation id, component id, s eoi, s ess, s mean offset from
// the trace's start, s mean duration, s min, s max (ns, means rounded),
// failed count.
void pack_reduced_executions(std::span<const analysis::ReducedExecution> positions,
                             const std::function<uint64_t(std::string_view)>& name_id,
                             std::string& out);
std::string unpack_reduced_executions(std::string_view blob,
                                      const std::function<const std::string*(uint64_t)>& name_of,
                                      std::vector<analysis::ReducedExecution>& out);

}  // namespace sonde::store
