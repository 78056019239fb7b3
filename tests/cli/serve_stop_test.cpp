// Runs the built `sonde serve` as a process and stops it with a signal at
// once, while it still loads the log: the stop must not be lost (httplib's
// stop() does nothing before the server listens), so it exits by itself.
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "collect_process.hpp"

namespace sonde::test {
namespace {

TEST_F(SondeCli, ServeStoppedWhileItStartsExitsByItself) {
  const std::string log = (kKieker / "bookstore-oer-2010" / "log").string();
  // Delays in small steps, to land in the window between the signal thread's
  // start and the server's listening in some of the runs.
  for (int delay_ms = 0; delay_ms <= 40; delay_ms += 2) {
    SCOPED_TRACE("SIGTERM after " + std::to_string(delay_ms) + " ms");
    Process serve({SONDE_CLI, "serve", log, "--listen", "127.0.0.1:0"}, dir_ / "serve.err");
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    serve.signal(SIGTERM);
    // A process still running after 20 s is killed by ~Process.
    const int status = serve.wait_for(std::chrono::seconds(20));
    // 0: it stopped by itself; 143: the signal came before it set its handling up.
    EXPECT_TRUE(status == 0 || status == 128 + SIGTERM) << "exit status " << status;
  }
}

}  // namespace
}  // namespace sonde::test
