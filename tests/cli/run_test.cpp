// `sonde run`: runs the real sonde binary on real programs (sh, the example
// programs) and checks exit statuses, error messages, the environment handed
// to the program, signal forwarding and the reported log files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

const std::string kSonde = SONDE_CLI;
const std::string kExamples = std::string(SONDE_BINARY_DIR) + "/examples";

struct Result {
  int status = -1;     // exit status, or 128 + signal if sonde itself was killed
  std::string output;  // stdout and stderr together
};

class SondeRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sonde-run-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = fs::canonical(pattern);
  }

  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }

  // Starts `sonde run ARGS` with stdout and stderr going to a file, in the
  // environment of the test minus any SONDE_* and LD_PRELOAD (so that a
  // developer's settings cannot change results), plus `env`.
  pid_t start(const std::vector<std::string>& args,
              const std::map<std::string, std::string>& env = {}) {
    std::vector<std::string> argv_storage = {kSonde, "run"};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<std::string> env_storage;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string entry = *e;
      if (entry.rfind("SONDE_", 0) == 0 || entry.rfind("LD_PRELOAD=", 0) == 0) continue;
      env_storage.push_back(entry);
    }
    for (const auto& [name, value] : env) env_storage.push_back(name + "=" + value);
    std::vector<char*> argv, envp;
    for (std::string& s : argv_storage) argv.push_back(s.data());
    for (std::string& s : env_storage) envp.push_back(s.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    const std::string output = output_path().string();

    pid_t pid = fork();
    if (pid == 0) {
      int fd = open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(dir_.c_str()) != 0) _exit(200);
      execve(argv[0], argv.data(), envp.data());
      _exit(201);
    }
    return pid;
  }

  Result finish(pid_t pid) {
    Result r;
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return r;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ifstream in(output_path());
    std::stringstream text;
    text << in.rdbuf();
    r.output = text.str();
    return r;
  }

  Result run(const std::vector<std::string>& args,
             const std::map<std::string, std::string>& env = {}) {
    return finish(start(args, env));
  }

  // Log files reported as "log written to PATH", in order.
  static std::vector<std::string> reported_logs(const std::string& output) {
    std::vector<std::string> logs;
    static const std::regex line("sonde: log written to (\\S+)");
    for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it) {
      logs.push_back((*it)[1]);
    }
    return logs;
  }

  fs::path output_path() const { return dir_ / "sonde-run-output.txt"; }
  std::string out_dir() const { return (dir_ / "logs").string(); }

  fs::path dir_;
};

// ---- Exit status ---------------------------------------------------------------

TEST_F(SondeRunTest, ExitStatusIsTheProgramsStatus) {
  Result r = run({"--out", out_dir(), "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(r.status, 3) << r.output;
  r = run({"--out", out_dir(), "--", "true"});
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST_F(SondeRunTest, ProgramKilledBySignalGives128PlusSignal) {
  Result r = run({"--out", out_dir(), "--", "sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(r.status, 128 + SIGKILL) << r.output;
  EXPECT_NE(r.output.find("killed by signal 9"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("SIGKILL"), std::string::npos) << r.output;
}

TEST_F(SondeRunTest, NonexistentProgramGives127WithMessage) {
  Result r = run({"--out", out_dir(), "--", "/nonexistent/sonde-test-program"});
  EXPECT_EQ(r.status, 127) << r.output;
  EXPECT_NE(r.output.find("cannot execute '/nonexistent/sonde-test-program'"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("No such file or directory"), std::string::npos) << r.output;

  r = run({"--out", out_dir(), "--", "sonde-test-no-such-program-on-path"});
  EXPECT_EQ(r.status, 127) << r.output;
  EXPECT_NE(r.output.find("cannot execute 'sonde-test-no-such-program-on-path'"), std::string::npos)
      << r.output;
}

TEST_F(SondeRunTest, SeveralValuesAfterOneSetGetAHint) {
  Result r =
      run({"--out", out_dir(), "--set", "summary=false", "buffer_events=1024", "--", "true"});
  EXPECT_EQ(r.status, 127) << r.output;
  EXPECT_NE(r.output.find("repeat --set"), std::string::npos) << r.output;
}

// ---- Errors before the program starts --------------------------------------

TEST_F(SondeRunTest, OutDirThatCannotBeCreatedIsAnError) {
  std::ofstream(dir_ / "a-file") << "not a directory\n";
  const std::string out = (dir_ / "a-file" / "logs").string();
  Result r = run({"--out", out, "--", "touch", (dir_ / "ran").string()});
  EXPECT_EQ(r.status, 125) << r.output;
  EXPECT_NE(r.output.find("cannot create output directory '" + out + "'"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "ran")) << "the program ran despite the error";
}

TEST_F(SondeRunTest, ReadOnlyOutDirIsAnError) {
  if (geteuid() == 0) GTEST_SKIP() << "root can write to a read-only directory";
  fs::create_directory(out_dir());
  fs::permissions(out_dir(), fs::perms::owner_read | fs::perms::owner_exec);
  Result r = run({"--out", out_dir(), "--", "touch", (dir_ / "ran").string()});
  fs::permissions(out_dir(), fs::perms::owner_all);
  EXPECT_EQ(r.status, 125) << r.output;
  EXPECT_NE(r.output.find("cannot write to output directory"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

TEST_F(SondeRunTest, MissingConfigFileIsAnError) {
  const std::string config = (dir_ / "missing.conf").string();
  Result r = run({"--out", out_dir(), "--config", config, "--", "touch", (dir_ / "ran").string()});
  EXPECT_EQ(r.status, 125) << r.output;
  EXPECT_NE(r.output.find("config file '" + config + "' does not exist"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

TEST_F(SondeRunTest, SetWithoutEqualsIsAnError) {
  Result r = run({"--out", out_dir(), "--set", "buffer_events", "--", "true"});
  EXPECT_EQ(r.status, 125) << r.output;
  EXPECT_NE(r.output.find("--set 'buffer_events': expected key=value"), std::string::npos)
      << r.output;
}

TEST_F(SondeRunTest, UnknownWriterIsAnError) {
  Result r = run({"--out", out_dir(), "--writer", "carrier-pigeon", "--", "true"});
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("carrier-pigeon"), std::string::npos) << r.output;
}

TEST_F(SondeRunTest, ToNeedsHostAndPort) {
  for (const std::string bad : {"10133", "127.0.0.1", "127.0.0.1:", ":10133", "h:0", "h:65536",
                                "h:12x"}) {
    Result r = run({"--to", bad, "--", "true"});
    EXPECT_EQ(r.status, 125) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--to '" + bad + "': expected HOST:PORT"), std::string::npos)
        << r.output;
  }
}

TEST_F(SondeRunTest, ToAndAnotherWriterDisagree) {
  Result r = run({"--to", "127.0.0.1:9", "--writer", "native", "--", "true"});
  EXPECT_EQ(r.status, 125) << r.output;
  EXPECT_NE(r.output.find("--to and --set writer= disagree"), std::string::npos) << r.output;
}

// ---- What the program gets -------------------------------------------------------

TEST_F(SondeRunTest, ToSelectsTheTcpWriterAndItsReceiver) {
  Result r = run({"--no-preload", "--to", "192.0.2.7:4711", "--", "sh", "-c",
                  "echo \"ENV $SONDE_WRITER|$SONDE_TCP_HOST|$SONDE_TCP_PORT\""});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("ENV tcp|192.0.2.7|4711\n"), std::string::npos) << r.output;
}

TEST_F(SondeRunTest, SettingsReachTheProgramAsEnvironment) {
  std::ofstream(dir_ / "sonde.conf") << "summary = false\n";
  // Relative paths, resolved against sonde's working directory (dir_).
  Result r = run({"--no-preload", "--out", "logs", "--writer", "kieker-bin", "--config",
                  "sonde.conf", "--set", "buffer_events = 1024", "--", "sh", "-c",
                  "echo \"ENV $SONDE_OUT|$SONDE_WRITER|$SONDE_CONFIG|$SONDE_BUFFER_EVENTS|"
                  "${LD_PRELOAD-unset}\""});
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string expected = "ENV " + (dir_ / "logs").string() + "|kieker-bin|" +
                               (dir_ / "sonde.conf").string() + "|1024|unset\n";
  EXPECT_NE(r.output.find(expected), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_directory(dir_ / "logs")) << "the output directory was not created";
}

TEST_F(SondeRunTest, LibsondeAndItsPreloadLibraryArePrependedToLdPreload) {
  // Any library that exists and is harmless to preload.
  const std::string existing = kExamples + "/libautoinst_shapes.so";
  ASSERT_TRUE(fs::exists(existing)) << existing;
  Result r = run({"--out", out_dir(), "--set", "summary=false", "--", "sh", "-c",
                  "echo \"PRELOAD $LD_PRELOAD\""},
                 {{"LD_PRELOAD", existing}});
  ASSERT_EQ(r.status, 0) << r.output;
  // Both named, libsonde too: loaded only as the preload library's
  // dependency it would come after glibc and its no-op hooks.
  static const std::regex line(
      "PRELOAD (/[^:\\s]*)/libsonde-preload\\.so:(/[^:\\s]*)/libsonde\\.so:(\\S+)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, line)) << r.output;
  EXPECT_TRUE(fs::exists(m[1].str() + "/libsonde-preload.so")) << m[1];
  EXPECT_EQ(m[1].str(), m[2].str()) << "both from one directory";
  EXPECT_EQ(m[3].str(), existing);
}

TEST_F(SondeRunTest, ProgramArgumentsArePassedVerbatim) {
  // Options after the program's name belong to the program, even sonde's own.
  Result r = run({"--no-preload", "--out", out_dir(), "sh", "-c", "printf 'ARGS %s|' \"$@\"", "sh",
                  "--out", "a b", "-x", "--"});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("ARGS --out|ARGS a b|ARGS -x|ARGS --|"), std::string::npos) << r.output;
}

TEST_F(SondeRunTest, TerminationSignalIsForwardedToTheProgram) {
  const fs::path ready = dir_ / "ready";
  pid_t sonde = start(
      {"--out", out_dir(), "--", "sh", "-c", "touch '" + ready.string() + "'; exec sleep 60"});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(ready) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(ready)) << "the program never started";
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(sonde, SIGTERM), 0);
  Result r = finish(sonde);
  EXPECT_EQ(r.status, 128 + SIGTERM) << r.output;
  EXPECT_NE(r.output.find("SIGTERM"), std::string::npos) << r.output;
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(20))
      << "the program did not end promptly, so the signal was not forwarded";
}

// ---- Reported logs -------------------------------------------------------------

TEST_F(SondeRunTest, AutoinstWritesALogNamedAfterItsPid) {
  Result r = run({"--out", out_dir(), "--", kExamples + "/example_autoinst"});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("autoinst:"), std::string::npos) << r.output;
  std::vector<std::string> logs = reported_logs(r.output);
  ASSERT_EQ(logs.size(), 1u) << r.output;
  static const std::regex name("example_autoinst-[0-9]+\\.sonde");
  EXPECT_EQ(fs::path(logs[0]).parent_path(), fs::path(out_dir()));
  EXPECT_TRUE(std::regex_match(fs::path(logs[0]).filename().string(), name)) << logs[0];
  EXPECT_TRUE(fs::is_regular_file(logs[0])) << logs[0];
  EXPECT_GT(fs::file_size(logs[0]), 0u);
}

TEST_F(SondeRunTest, KiekerWriterLogIsADirectory) {
  Result r =
      run({"--out", out_dir(), "--writer", "kieker-dat", "--", kExamples + "/example_autoinst"});
  ASSERT_EQ(r.status, 0) << r.output;
  // Only while libsonde is built without Kieker writers; it says so itself.
  if (r.output.find("not available in this build") != std::string::npos) {
    GTEST_SKIP() << r.output;
  }
  std::vector<std::string> logs = reported_logs(r.output);
  ASSERT_EQ(logs.size(), 1u) << r.output;
  static const std::regex name("kieker-example_autoinst-[0-9]+");
  EXPECT_TRUE(std::regex_match(fs::path(logs[0]).filename().string(), name)) << logs[0];
  EXPECT_TRUE(fs::is_regular_file(fs::path(logs[0]) / "kieker.map")) << logs[0];
}

TEST_F(SondeRunTest, ForkedChildsLogIsReportedToo) {
  Result r = run({"--out", out_dir(), "--", kExamples + "/example_fork", "5", "3"});
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::string> logs = reported_logs(r.output);
  ASSERT_EQ(logs.size(), 2u) << r.output;
  EXPECT_NE(logs[0], logs[1]);
  EXPECT_NE(r.output.find("by another process during the run"), std::string::npos) << r.output;
  for (const std::string& log : logs) EXPECT_TRUE(fs::is_regular_file(log)) << log;
}

TEST_F(SondeRunTest, CrashingProgramStillGetsItsLogReported) {
  Result r = run({"--out", out_dir(), "--", kExamples + "/example_crash", "10"});
  EXPECT_EQ(r.status, 128 + SIGSEGV) << r.output;
  EXPECT_NE(r.output.find("SIGSEGV"), std::string::npos) << r.output;
  EXPECT_EQ(reported_logs(r.output).size(), 1u) << r.output;

  r = run({"--out", out_dir(), "--", kExamples + "/example_crash", "10", "abort"});
  EXPECT_EQ(r.status, 128 + SIGABRT) << r.output;
  EXPECT_EQ(reported_logs(r.output).size(), 1u) << r.output;
}

TEST_F(SondeRunTest, NoLogIsSaidClearly) {
  Result r = run({"--no-preload", "--out", out_dir(), "--", "true"});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("no log was written to " + out_dir()), std::string::npos) << r.output;
}

TEST_F(SondeRunTest, BadSettingLeavesTheProgramRunningUnmonitored) {
  Result r =
      run({"--out", out_dir(), "--set", "buffer_events=3", "--", kExamples + "/example_autoinst"});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("buffer_events"), std::string::npos) << "libsonde's own error\n"
                                                               << r.output;
  EXPECT_NE(r.output.find("no log was written"), std::string::npos) << r.output;
}

TEST_F(SondeRunTest, NullWriterWritesNoFile) {
  Result r = run({"--out", out_dir(), "--writer", "null", "--", kExamples + "/example_autoinst"});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("writer 'null' writes no log file"), std::string::npos) << r.output;
  EXPECT_TRUE(reported_logs(r.output).empty()) << r.output;
}

}  // namespace
