// `sonde snapshot PID` against a running program with the flight recorder
// on: a complete snapshot of its recent requests, and clear errors for a
// process that is not there or does not answer.
#include <stdlib.h>

#include <chrono>
#include <string>
#include <thread>

#include "collect_process.hpp"
#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

const std::string kFlightProgram =
    std::string(SONDE_BINARY_DIR) + "/tests/monitor/programs/test_flight";

class SondeSnapshot : public SondeCli {};

TEST_F(SondeSnapshot, ARunningProgramHandsOverACompleteSnapshot) {
  const fs::path out = dir_ / "logs";
  // The spawned program inherits this test process's environment.
  setenv("SONDE_FLIGHT", "on", 1);
  setenv("SONDE_OUT", out.c_str(), 1);
  setenv("SONDE_FLIGHT_WINDOW_MS", "60000", 1);
  Process server({kFlightProgram, "serve", "30"}, dir_ / "server.err");
  unsetenv("SONDE_FLIGHT");
  unsetenv("SONDE_OUT");
  unsetenv("SONDE_FLIGHT_WINDOW_MS");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const CliRun r = sonde({"snapshot", std::to_string(server.pid()), "--timeout", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err << server.err();
  const std::string path = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(path.find(".snapshot-1.sonde"), std::string::npos) << path;
  // A complete log (END item) that every command reads.
  const CliRun check = sonde({"check", path});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  const CliRun summary = sonde({"summary", path});
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("served.request"), std::string::npos) << summary.out;
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 128 + SIGTERM) << server.err();
  EXPECT_NE(server.err().find("1 snapshot(s)"), std::string::npos) << server.err();
}

TEST_F(SondeSnapshot, AMissingProcessOrOneWithoutTheFlightRecorderIsAnError) {
  const CliRun gone = sonde({"snapshot", "999999999"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("no process 999999999"), std::string::npos) << gone.err;
  // A program monitored without the flight recorder ignores the request
  // (SIGUSR2's default would end it: here its handler is off with
  // flight_signal pointing at SIGWINCH, which is ignored by default).
  setenv("SONDE_OUT", (dir_ / "plain").c_str(), 1);
  Process plain({kFlightProgram, "serve", "30"}, dir_ / "plain.err");
  unsetenv("SONDE_OUT");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const CliRun none = sonde({"snapshot", std::to_string(plain.pid()), "--signal",
                             std::to_string(SIGWINCH), "--timeout", "1"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no new snapshot appeared"), std::string::npos) << none.err;
  plain.signal(SIGTERM);
  plain.wait();
}

}  // namespace
}  // namespace sonde::test
