// Running the monitored program as sonde's child (`sonde run`): fork and
// exec with a pipe that reports a failed exec, SIGINT, SIGTERM and SIGHUP
// forwarded to the child while it runs, and its end described.
#pragma once

#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace sonde::cli {

// sonde's exit status for a program it could not execute, as env(1) and
// timeout(1) use it, so that it rarely collides with the program's.
constexpr int kCannotExecute = 127;

// fork or pipe failed; the message names which and why.
struct LaunchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Launch {
  pid_t pid = -1;
  int exec_errno = 0;  // non-zero: the program could not be executed
};

// Starts `command` (its first word looked up on PATH) with the forwarders
// installed. Throws LaunchError.
Launch launch(const std::vector<std::string>& command);

// waitpid's status for `pid`, or -1 if it cannot be waited for. Forwarding
// to `pid` stops before it is reaped, so a signal that comes later never
// reaches a process that was given its pid afterwards.
int wait_for_child(pid_t pid);

// The pid SIGINT, SIGTERM and SIGHUP are forwarded to now; 0: none.
pid_t forwarding_to();

// "signal 15 (SIGTERM: Terminated)".
std::string describe_signal(int sig);

}  // namespace sonde::cli
