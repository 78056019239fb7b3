// The `sonde` command line: one binary, one subcommand per cmd_*.cpp file.
#include <algorithm>
#include <iostream>

#include "cli/command.hpp"

namespace sonde::cli {

std::vector<CommandEntry>& command_registry() {
  static std::vector<CommandEntry> registry;
  return registry;
}

}  // namespace sonde::cli

int main(int argc, char** argv) {
  CLI::App app{"sonde: monitor, benchmark and diagnose the performance of C and C++ programs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("sonde ") + SONDE_VERSION);
  int exit_code = 0;
  auto& registry = sonde::cli::command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& entry : registry) {
    CLI::App* sub = app.add_subcommand(entry.name, entry.description);
    entry.setup(*sub, exit_code);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit with 2 whatever CLI11's own code; --help/--version with 0.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
