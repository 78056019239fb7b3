#include "analysis/render/report_csv.hpp"

#include <algorithm>
#include <charconv>

namespace sonde::analysis {
namespace {

// Shortest text that reads back as the same double.
std::string csv_number(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

void append_distribution(std::string& line, const DistributionSummary& s) {
  for (const std::string& v : {std::to_string(s.total), csv_number(s.mean), csv_number(s.stddev),
                               std::to_string(s.min), csv_number(s.median), csv_number(s.p90),
                               csv_number(s.p95), csv_number(s.p99), std::to_string(s.max)}) {
    line += ',';
    line += v;
  }
}

}  // namespace

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

void write_operations_csv(std::ostream& out, const std::vector<OperationStats>& operations,
                          size_t top) {
  out << "host,component,operation,count,failed";
  for (const char* prefix : {"incl_", "excl_"}) {
    for (const char* field : {"total_ns", "mean_ns", "std_ns", "min_ns", "median_ns", "p90_ns",
                              "p95_ns", "p99_ns", "max_ns"}) {
      out << ',' << prefix << field;
    }
  }
  out << "\r\n";
  const size_t shown = top == 0 ? operations.size() : std::min(top, operations.size());
  for (size_t i = 0; i < shown; ++i) {
    const OperationStats& s = operations[i];
    std::string line = csv_field(s.key.host) + ',' + csv_field(s.key.component) + ',' +
                       csv_field(s.key.operation) + ',' + std::to_string(s.count) + ',' +
                       std::to_string(s.failed);
    append_distribution(line, s.inclusive);
    append_distribution(line, s.exclusive);
    out << line << "\r\n";
  }
}

}  // namespace sonde::analysis
