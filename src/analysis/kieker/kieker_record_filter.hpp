// The record stage in front of trace reconstruction, as in Kieker's
// trace-analysis pipeline: drop the records of traces that were not selected
// (Kieker's TraceIdFilter: --select-traces, or --filter-traces to drop the
// listed ones instead), then number the system entities
// of every OperationExecutionRecord in log order (Kieker's
// ExecutionRecordTransformationStage), so that "@1", "@2", ... match Kieker's
// even though traces reach the outputs later and in another order.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "analysis/kieker/kieker_system_model.hpp"
#include "format/record.hpp"

namespace sonde::analysis {

enum class TraceIdSelection : uint8_t {
  kOnly,    // only the listed traces pass; an empty list lets every trace pass
  kExcept,  // every trace but the listed ones passes
};

class KiekerRecordFilter : public format::RecordSink {
 public:
  // `next` and `model` must outlive this.
  KiekerRecordFilter(format::RecordSink& next, KiekerSystemModel& model,
                     std::unordered_set<int64_t> ids = {},
                     TraceIdSelection selection = TraceIdSelection::kOnly);

  bool on_record(const format::Record& record) override;

  uint64_t dropped() const { return dropped_; }  // records of traces not selected
  // Listed trace ids seen in at least one record.
  const std::unordered_set<int64_t>& seen() const { return seen_; }

 private:
  struct Layout {
    // Checked on every lookup: a reader may free a schema and allocate
    // another at the same address.
    std::string class_name;
    size_t field_count = 0;
    bool execution_record = false;
    int trace_id = -1, operation = -1, host = -1;
  };
  const Layout& layout_of(const format::RecordSchema* schema);

  format::RecordSink& next_;
  KiekerSystemModel& model_;
  std::unordered_set<int64_t> ids_;
  TraceIdSelection selection_;
  std::unordered_set<int64_t> seen_;
  std::unordered_map<const format::RecordSchema*, Layout> layouts_;
  uint64_t dropped_ = 0;
};

}  // namespace sonde::analysis
