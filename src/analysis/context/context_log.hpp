// Reads any log sonde understands (native or Kieker) into ContextData.
#pragma once

#include <string>

#include "analysis/context/context_data.hpp"
#include "format/log_reader.hpp"

namespace sonde::analysis {

struct ContextLog {
  format::LogReadStats read;
  ContextData data;
};

ContextLog read_context_log(const std::string& path);

}  // namespace sonde::analysis
