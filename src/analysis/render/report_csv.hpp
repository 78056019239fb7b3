// Per-operation statistics as CSV (RFC 4180 quoting), one row per
// operation, durations as plain numbers in nanoseconds, for spreadsheets
// and scripts.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/operation_statistics.hpp"

namespace sonde::analysis {

// Header: host,component,operation,count,failed, then for incl_ and excl_:
// total_ns,mean_ns,std_ns,min_ns,median_ns,p90_ns,p95_ns,p99_ns,max_ns.
void write_operations_csv(std::ostream& out, const std::vector<OperationStats>& operations,
                          size_t top = 0);

// One CSV field, quoted when it holds a comma, quote, CR or LF.
std::string csv_field(std::string_view text);

}  // namespace sonde::analysis
