// Subcommands register themselves: each cmd_*.cpp defines one with
// SONDE_COMMAND, so adding a command never touches main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <functional>
#include <string>
#include <vector>

namespace sonde::cli {

// Exit statuses every command shares (docs/ and each command's --help say
// which it uses); a command may add its own above 2.
inline constexpr int kOk = 0;
inline constexpr int kFailed = 1;      // failed, or its input cannot be read
inline constexpr int kUnreadable = 1;  // the same status, where "unreadable" says it better
inline constexpr int kUsage = 2;       // bad arguments

// A whole string as a number of type T, nothing else around it.
template <typename T>
bool parse_number(const std::string& text, T* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

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
// __COUNTER__, not __LINE__: unique when the command files are compiled
// in batches (unity build), where two may register on the same line.
#define SONDE_COMMAND(name, description, setup)                                            \
  static ::sonde::cli::CommandRegistrar SONDE_COMMAND_CONCAT(sonde_command_, __COUNTER__)( \
      name, description, setup)

}  // namespace sonde::cli
