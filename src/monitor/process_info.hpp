// Describes this process for the log's metadata.
#pragma once

#include "monitor/writers/event_writer.hpp"

namespace sonde::monitor {

ProcessInfo describe_process(const Config& config);

}  // namespace sonde::monitor
