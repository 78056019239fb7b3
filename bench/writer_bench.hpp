// What the writer benchmarks (writer_cost.cpp, writer_replay.cpp) share: the
// stubs libsonde's controller would provide, the thread's CPU clock, and a
// WriterCore opened from the environment's configuration as a monitored
// program's would be (SONDE_WRITER, SONDE_OUT, ...). One benchmark per
// executable includes this once.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "monitor/config.hpp"
#include "monitor/controller.hpp"
#include "monitor/writers/writer_core.hpp"
#include "monitor/writers/writer_factories.hpp"

// registry.cpp asks the controller whether an operation is monitored; the
// benchmark has no controller.
namespace sonde::monitor {
bool operation_monitored(std::string_view) { return true; }
std::atomic<uint8_t> g_op_tag{2};
}  // namespace sonde::monitor

namespace sonde::bench {

inline double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Loads `config` from the environment and opens a writer core for
// `application`; null (the reason printed on stderr) when either fails.
inline std::unique_ptr<monitor::WriterCore> open_writer_core(monitor::Config& config,
                                                             const char* application) {
  if (std::string err = monitor::load_config(config); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return nullptr;
  }
  monitor::ProcessInfo info;
  info.application = application;
  info.pid = 1;
  info.timer = "tsc";
  auto core =
      std::make_unique<monitor::WriterCore>(config, monitor::make_event_writer(config), info);
  if (std::string err = core->open(); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return nullptr;
  }
  return core;
}

}  // namespace sonde::bench
