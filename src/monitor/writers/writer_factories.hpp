// Constructors of the individual writers, one per file.
#pragma once

#include <memory>
#include <string>

#include "monitor/writers/event_writer.hpp"

namespace sonde::monitor {

std::unique_ptr<EventWriter> make_native_writer(const Config& config);
std::unique_ptr<EventWriter> make_null_writer();
std::unique_ptr<EventWriter> make_kieker_writer(const Config& config);  // dat or bin
std::unique_ptr<EventWriter> make_tcp_writer(const Config& config);

// mkdir -p; returns "" or an error naming the directory.
std::string make_directories(const std::string& dir);

}  // namespace sonde::monitor
