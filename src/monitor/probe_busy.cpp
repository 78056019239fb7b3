#include "monitor/probe_busy.hpp"

namespace sonde::monitor {

__thread uint8_t t_probe_busy __attribute__((tls_model("initial-exec")));

}  // namespace sonde::monitor
