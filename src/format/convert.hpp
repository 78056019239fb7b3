// Converts between log formats through the record model: any readable log
// (native, Kieker dat/bin directory) to a native file or a Kieker directory.
// Every record is carried over; a native log's thread events arrive as
// Kieker flow records, so native → Kieker → native keeps them as records.
#pragma once

#include <string>

#include "format/log_reader.hpp"
#include "format/record_log_writer.hpp"

namespace sonde::format {

struct ConvertResult {
  LogReadStats read;
  uint64_t written = 0;
  uint64_t strings_altered = 0;  // .dat cannot carry ';', CR, LF
  std::string error;             // set if the output could not be written
  bool ok() const { return read.ok && error.empty(); }
};

ConvertResult convert_log(const std::string& input, OutputFormat format, const std::string& output,
                          Compression compression = Compression::kNone);

}  // namespace sonde::format
