#pragma once

#include <atomic>

namespace sonde::cli {

// Makes SIGINT and SIGTERM set the returned flag instead of ending the
// process, so that a long-running command (listen, collect) can stop its
// loop, flush and report what it received. Call once per process.
std::atomic<bool>& stop_on_interrupt_or_terminate();

}  // namespace sonde::cli
