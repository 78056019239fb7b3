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

// A process that listens on `port` (TCP, IPv4 or IPv6) and is not the
// system under test's: neither in the process group of `sut` nor below it,
// nor a detached daemon started after it (a server the SUT spawned and
// left to init). "pid 1234 (shop)". Nothing when a listener is the SUT's,
// when there is none, or when their owners cannot be read.
std::optional<std::string> foreign_listener(int port, pid_t sut);

}  // namespace sonde::diagnose::engine
