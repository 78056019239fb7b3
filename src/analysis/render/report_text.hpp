// The human-readable summary of an analysis: the log and what the reader
// said about it (lost events first and loud), trace counts with the reasons
// traces were invalid, trace durations, and the per-operation table.
#pragma once

#include <cstddef>
#include <ostream>
#include <string_view>

#include "analysis/reconstruct/trace_analysis.hpp"

namespace sonde::analysis {

struct TextReportOptions {
  size_t top = 0;  // operations to list, 0 = all
};

void write_text_report(std::ostream& out, const AnalysisResult& result,
                       const TextReportOptions& options = {});

// "Kieker filesystem log", "native sonde log", "unknown".
std::string_view log_kind_name(format::LogKind kind);

}  // namespace sonde::analysis
