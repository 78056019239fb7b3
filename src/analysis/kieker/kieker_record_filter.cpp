#include "analysis/kieker/kieker_record_filter.hpp"

#include "analysis/model/operation_signature.hpp"
#include "format/schema.hpp"

namespace sonde::analysis {
namespace {

template <typename T>
const T* field(const format::Record& r, int index) {
  if (index < 0 || static_cast<size_t>(index) >= r.values.size()) return nullptr;
  return std::get_if<T>(&r.values[static_cast<size_t>(index)]);
}

}  // namespace

KiekerRecordFilter::KiekerRecordFilter(format::RecordSink& next, KiekerSystemModel& model,
                                       std::unordered_set<int64_t> ids, TraceIdSelection selection)
    : next_(next), model_(model), ids_(std::move(ids)), selection_(selection) {}

const KiekerRecordFilter::Layout& KiekerRecordFilter::layout_of(
    const format::RecordSchema* schema) {
  auto it = layouts_.find(schema);
  if (it != layouts_.end() && it->second.field_count == schema->fields.size() &&
      it->second.class_name == schema->class_name) {
    return it->second;
  }
  Layout l;
  l.class_name = schema->class_name;
  l.field_count = schema->fields.size();
  l.trace_id = schema->field_index("traceId");
  l.execution_record = schema->class_name == format::kieker_class::kOperationExecution;
  if (l.execution_record) {
    l.operation = schema->field_index("operationSignature");
    l.host = schema->field_index("hostname");
  }
  return layouts_[schema] = std::move(l);
}

bool KiekerRecordFilter::on_record(const format::Record& record) {
  if (record.schema == nullptr) return next_.on_record(record);
  const Layout& l = layout_of(record.schema);
  const int64_t* trace_id = field<int64_t>(record, l.trace_id);
  if (trace_id != nullptr && !ids_.empty()) {
    const bool listed = ids_.count(*trace_id) > 0;
    if (listed) seen_.insert(*trace_id);
    if (listed != (selection_ == TraceIdSelection::kOnly)) {
      ++dropped_;
      return true;
    }
  }
  if (l.execution_record) {
    const std::string_view* operation = field<std::string_view>(record, l.operation);
    const std::string_view* host = field<std::string_view>(record, l.host);
    if (operation != nullptr && host != nullptr) {
      // The component as the reconstructor derives it (trace_reconstructor.cpp).
      model_.add(*host, class_of_signature(*operation, *operation), *operation);
    }
  }
  return next_.on_record(record);
}

}  // namespace sonde::analysis
