// Patterns set while the program runs (the API, the patterns file): the
// manual probes' operation tags and the compiler hooks' function filter
// follow each new set.
#include <string>
#include <string_view>

#include "monitor/controller.hpp"
#include "monitor/controller_state.hpp"
#include "monitor/function_filter.hpp"
#include "monitor/patterns.hpp"
#include "monitor/xray_mode.hpp"
#include "sonde/sonde.hpp"

namespace sonde::monitor {

using namespace controller;

std::atomic<uint8_t> g_op_tag{2};

bool operation_monitored(std::string_view name) {
  State& s = state();
  MonitorLock lock(s.patterns_mu);
  return s.patterns.monitored(name);
}

std::string set_patterns(std::string_view text, bool before_recording) {
  State& s = state();
  PatternSet next;
  if (std::string err = next.parse(text); !err.empty()) return err;
  {
    MonitorLock lock(s.patterns_mu);
    s.patterns = next;
  }
  // New generation: every manual probe re-evaluates on its next call.
  uint8_t g = s.op_generation.load();
  g = g >= 120 ? 1 : g + 1;
  s.op_generation.store(g);
  g_op_tag.store(static_cast<uint8_t>(g * 2));
  __atomic_store_n(&sonde_op_off_tag, static_cast<uint8_t>(g * 2 + 1), __ATOMIC_RELAXED);
  rebuild_function_filter(next, before_recording);
  xray_apply_patterns(next);
  return "";
}

}  // namespace sonde::monitor
