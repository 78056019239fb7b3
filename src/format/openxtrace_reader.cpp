#include "format/openxtrace_reader.hpp"

#include <filesystem>
#include <fstream>

#include "format/openxtrace_splitter.hpp"
#include "format/openxtrace_to_records.hpp"
#include "format/schema.hpp"
#include "format/string_pool.hpp"

namespace sonde::format {

bool looks_like_openxtrace(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  std::string head(64 * 1024, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const size_t first = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (first == std::string::npos || (head[first] != '[' && head[first] != '{')) return false;
  return head.find("\"rootOfTrace\"") != std::string::npos ||
         head.find("org.spec.research.open.xtrace") != std::string::npos;
}

LogReadStats read_openxtrace(const std::string& path, RecordSink& sink,
                             const OpenXtraceReadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    LogReadStats stats;
    stats.ok = false;
    stats.files.push_back(path);
    stats.errors.push_back(path + ": cannot open");
    return stats;
  }
  return read_openxtrace(in, path, sink, options);
}

LogReadStats read_openxtrace(std::istream& in, const std::string& name, RecordSink& sink,
                             const OpenXtraceReadOptions& options) {
  LogReadStats stats;
  stats.files.push_back(name);
  StringPool pool;
  openxtrace::TraceConverter converter(pool);
  std::vector<openxtrace::PlannedRecord> planned;
  Record record;
  bool metadata_sent = false;
  uint64_t traces = 0;
  uint64_t rejected = 0;
  bool stopped = false;

  auto add_error = [&](std::string message) {
    stats.ok = false;
    if (stats.errors.size() < options.max_listed_errors) {
      stats.errors.push_back(name + ": " + std::move(message));
    }
  };
  auto deliver = [&](const Record& r) {
    if (stopped) return false;
    ++stats.records;
    if (!sink.on_record(r)) stopped = true;
    return !stopped;
  };

  const openxtrace::SplitResult split = openxtrace::split_traces(
      in, options.max_nesting_depth, [&](openxtrace::Json&& trace, const std::string& path) {
        ++traces;
        std::string error;
        if (!converter.convert(trace, path, planned, &error)) {
          ++rejected;
          add_error("trace skipped: " + error);
          return true;
        }
        if (!metadata_sent && !planned.empty()) {
          // Describes the log as a KiekerMetadataRecord, as the other readers do.
          metadata_sent = true;
          record.schema = find_builtin_schema(kieker_class::kMetadata);
          record.logging_timestamp = planned.front().logging_timestamp;
          record.values = {std::string_view("OPEN.xtrace"),
                           std::string_view("openxtrace"),
                           planned.front().values[3],  // the first trace's host
                           int64_t{1},
                           false,
                           int64_t{0},
                           std::string_view("NANOSECONDS"),
                           int64_t{0}};
          if (!deliver(record)) return false;
        }
        for (openxtrace::PlannedRecord& p : planned) {
          record.schema = p.schema;
          record.logging_timestamp = p.logging_timestamp;
          record.values = std::move(p.values);
          if (!deliver(record)) return false;
        }
        return true;
      });

  if (!split.ok) add_error(split.error);
  if (rejected > 0) {
    stats.warnings.push_back(name + ": " + std::to_string(rejected) + " of " +
                             std::to_string(traces) + " traces skipped (see errors)");
  }
  const openxtrace::ConversionNotes& notes = converter.notes();
  if (notes.synthetic_executions > 0) {
    stats.warnings.push_back(name + ": " + std::to_string(notes.synthetic_executions) +
                             " sub-traces have no method at their root; an execution named "
                             "after the root callable's type stands for it");
  }
  if (notes.synthesized_ids > 0) {
    stats.warnings.push_back(name + ": " + std::to_string(notes.synthesized_ids) +
                             " trace or sub-trace ids were missing or repeated; new ids given");
  }
  if (notes.dropped_callables > 0) {
    stats.warnings.push_back(name + ": " + std::to_string(notes.dropped_callables) +
                             " callables of unknown type, or nested in callables that nest "
                             "nothing, were left out");
  }
  if (split.ok && traces == 0) stats.warnings.push_back(name + ": no traces");
  return stats;
}

}  // namespace sonde::format
