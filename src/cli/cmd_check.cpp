// `sonde check LOG`: reads a log completely and reports what it holds and
// anything wrong with it (truncation, lost events, unreadable parts).
#include <iostream>
#include <map>

#include "cli/command.hpp"
#include "format/log_reader.hpp"

namespace sonde::cli {
namespace {

class Counter final : public format::RecordSink {
 public:
  bool on_record(const format::Record& r) override {
    ++by_class[r.schema->class_name];
    return true;
  }
  std::map<std::string, uint64_t> by_class;
};

int run_check(const std::string& path) {
  Counter counter;
  format::LogReadStats stats = format::read_log(path, counter);
  for (const std::string& w : stats.warnings) std::cerr << "warning: " << w << "\n";
  for (const std::string& e : stats.errors) std::cerr << "error: " << e << "\n";
  std::cout << "log: " << path << "\n";
  for (const std::string& f : stats.files) std::cout << "  file: " << f << "\n";
  std::cout << "records: " << stats.records << "\n";
  for (const auto& [cls, n] : counter.by_class) std::cout << "  " << n << "  " << cls << "\n";
  std::cout << "skipped: " << stats.skipped << "\n";
  std::cout << "lost events reported by the monitor: " << stats.lost_reported << "\n";
  if (!stats.ok) return 1;
  return stats.lost_reported != 0 || stats.skipped != 0 ? 3 : 0;
}

}  // namespace

SONDE_COMMAND("check", "Read a log completely and report its contents, damage and losses",
              [](CLI::App& app, int& exit_code) {
                auto path = std::make_shared<std::string>();
                app.add_option("log", *path,
                               "native .sonde file, directory, or Kieker log directory")
                    ->required();
                app.footer(
                    "Exit status: 0 complete, 1 unreadable, 3 readable but with lost or skipped "
                    "records.");
                app.callback([path, &exit_code] { exit_code = run_check(*path); });
              });

}  // namespace sonde::cli
