// Connecting a TCP writer to its receiver, shared by the native and the
// Kieker protocol.
#pragma once

#include <cstdint>
#include <string>

namespace sonde::monitor {

// A blocking IPv4 connection to host:port with TCP_NODELAY and a 5-s send
// timeout (a stalled receiver must not stall the writer forever). Returns
// the socket, or -1 with `error` set.
int connect_tcp(const std::string& host, uint16_t port, std::string& error);

}  // namespace sonde::monitor
