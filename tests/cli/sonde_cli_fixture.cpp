#include "sonde_cli_fixture.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

extern char** environ;

namespace sonde::test {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void SondeCli::SetUp() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  dir_ = fs::temp_directory_path() / ("sonde-cli-" + std::to_string(::getpid()) + "-" +
                                      info->test_suite_name() + "-" + info->name());
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  // What `sonde run --cull` remembers between runs stays in the test's own
  // folder, not the user's ~/.cache (docs/cull.md, "Across runs").
  setenv("SONDE_CULL_CACHE", (dir_ / "cull-cache").c_str(), 1);
}

void SondeCli::TearDown() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

CliRun SondeCli::sonde(std::vector<std::string> args) {
  const fs::path out = dir_ / "stdout.txt";
  const fs::path err = dir_ / "stderr.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  args.insert(args.begin(), SONDE_CLI);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  CliRun run;
  const int rc = posix_spawn(&pid, SONDE_CLI, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot start " << SONDE_CLI;
  if (rc != 0) return run;
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = slurp(out);
  run.err = slurp(err);
  return run;
}

}  // namespace sonde::test
