// Who listens on a local TCP port, from /proc: the engine picks a free port
// for the system under test, and between that choice and the SUT's bind()
// another process can take the port (two engines, or two test processes,
// choosing the same one). A readiness check that only connects would then
// measure that other server: the SUT's own log stayed empty while every
// request succeeded (EngineRun under ASan in CI, 2026-11-29).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace sonde::diagnose::engine {

// Who listens on `port` (TCP, IPv4 or IPv6). A listener is the system under
// test's when its process is in the process group of `sut`, below it, or a
// detached daemon started after it (a server the SUT spawned and left to
// init). Both can be set: servers that set SO_REUSEPORT (cpp-httplib does)
// bind a port another such server of the same user listens on, and the
// kernel then splits the connections between them (CI, 2026-11-29: a
// scaling experiment's SUT logged nothing while every request succeeded).
struct PortListeners {
  bool sut = false;
  std::optional<std::string> foreign;  // another listener: "pid 1234 (shop)"
};
// Nothing set when there is no listener or the owners cannot be read.
PortListeners listeners_on(int port, pid_t sut);

}  // namespace sonde::diagnose::engine
