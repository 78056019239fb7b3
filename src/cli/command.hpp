// Subcommands register themselves: each cmd_*.cpp defines one with
// SONDE_COMMAND, so adding a command never touches main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace sonde::cli {

// Called once to add the subcommand's options; the callback it installs on
// the subcommand returns the process exit status through `exit_code`.
using CommandSetup = std::function<void(CLI::App& app, int& exit_code)>;

struct CommandEntry {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<CommandEntry>& command_registry();

struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string description, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

#define SONDE_COMMAND_CONCAT2(a, b) a##b
#define SONDE_COMMAND_CONCAT(a, b) SONDE_COMMAND_CONCAT2(a, b)
#define SONDE_COMMAND(name, description, setup)                                         \
  static ::sonde::cli::CommandRegistrar SONDE_COMMAND_CONCAT(sonde_command_, __LINE__)( \
      name, description, setup)

}  // namespace sonde::cli
