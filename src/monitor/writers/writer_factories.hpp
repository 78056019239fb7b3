// Constructors of the individual writers, one per file.
#pragma once

#include <memory>
#include <string>

#include "monitor/writers/event_writer.hpp"

namespace sonde::monitor {

std::unique_ptr<EventWriter> make_native_writer(const Config& config);
// The same log at `path` (a flight-recorder snapshot).
std::unique_ptr<EventWriter> make_native_writer_at(const Config& config, std::string path);
std::unique_ptr<EventWriter> make_null_writer();
std::unique_ptr<EventWriter> make_kieker_writer(const Config& config);  // dat or bin
std::unique_ptr<EventWriter> make_native_tcp_writer(const Config& config);
std::unique_ptr<EventWriter> make_kieker_tcp_writer(const Config& config);

// The native log's chunk codec and level from the configuration.
format::NativeWriterOptions native_writer_options(const Config& config);
// The META items that describe the process at the start of a native log or stream.
void write_process_meta(format::NativeWriter& w, const ProcessInfo& p, const Config& config);

// mkdir -p; returns "" or an error naming the directory.
std::string make_directories(const std::string& dir);

}  // namespace sonde::monitor
