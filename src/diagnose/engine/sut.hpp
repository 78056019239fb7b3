// The system under test as a child process: started (optionally under
// `sonde run`, which preloads libsonde), checked for readiness on its TCP
// port, watched for death, and stopped with SIGINT then SIGKILL. It gets
// SIGTERM when the thread that started it ends (PR_SET_PDEATHSIG), so an
// engine killed outright leaves no SUT or broker behind.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sonde::diagnose::engine {

struct SutError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The SUT's port is another process's too (its listener was there first, or
// both listen with SO_REUSEPORT): a new port may succeed where this failed.
struct PortTakenError : SutError {
  using SutError::SutError;
};

class SystemUnderTest {
 public:
  // Starts `argv` with stdout and stderr appended to `output_file`, on
  // `cpus` only when not empty (its children inherit that). Throws
  // SutError if it cannot be started.
  SystemUnderTest(const std::vector<std::string>& argv, const std::string& output_file,
                  const std::vector<int>& cpus = {});
  ~SystemUnderTest();  // stops it if still running
  SystemUnderTest(const SystemUnderTest&) = delete;
  SystemUnderTest& operator=(const SystemUnderTest&) = delete;

  // Waits until host:port accepts a connection of the SUT's own listener.
  // Throws SutError if the process exits first or the timeout passes (with
  // its output's tail), PortTakenError when another process listens on the
  // port (beside the SUT, or alone until the timeout), and SutError
  // ("cancelled") when `*cancel` becomes true. Before throwing it stops the
  // SUT, giving it `stop_timeout_s` to exit by itself.
  void wait_ready(const std::string& host, int port, double timeout_s, double stop_timeout_s = 5,
                  const std::atomic<bool>* cancel = nullptr);
  // Exit description if it has exited ("exited with status 3",
  // "was killed by signal 9 (Killed)"), otherwise nothing.
  std::optional<std::string> exited();
  // SIGINT to its process group; SIGKILL after `timeout_s`. Returns how it
  // ended (describe_exit: "stopped (SIGINT, as asked)" when it obeyed).
  std::string stop(double timeout_s);
  std::string output_tail(std::size_t bytes = 2000) const;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stop_signal_ = 0;  // the signal stop() sent, 0 before
  std::string output_file_;
  std::optional<std::string> exit_;
};

// How a process ended, from its wait status: "exited with status 3",
// "was killed by signal 9 (Killed)". `asked` is the signal sonde sent to
// stop it (0: none): ending by SIGINT or SIGTERM then, directly or as a
// wrapper's exit status 128 + N (`sonde run` reports its program's signal
// so), or with status 0, is the normal stop it asked for:
// "stopped (SIGINT, as asked)", "stopped (exit status 0, as asked)".
std::string describe_exit(int wait_status, int asked = 0);

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_loopback_port();

}  // namespace sonde::diagnose::engine
