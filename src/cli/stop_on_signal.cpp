#include "cli/stop_on_signal.hpp"

#include <csignal>

namespace sonde::cli {
namespace {

std::atomic<bool> g_stop_requested{false};

void request_stop(int) { g_stop_requested.store(true); }

}  // namespace

std::atomic<bool>& stop_on_interrupt_or_terminate() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return g_stop_requested;
}

}  // namespace sonde::cli
