// `sonde run`: runs a program under monitoring and says where its log went.
// libsonde and its interposers (libsonde-preload) are preloaded
// (LD_PRELOAD) and configured through SONDE_*
// environment variables, so neither the program nor its build changes. The
// program is exec'd directly (no shell); its exit status becomes ours.
// About 500 lines: finding libsonde, the options' checks against each
// other and the config file, the SONDE_* environment they become, and
// listing the logs and culling reports the run left are one sequence read
// top to bottom; the child process and culling's cache across runs are in
// child_process.cpp and cull_cache.cpp.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/child_process.hpp"
#include "cli/command.hpp"
#include "cli/cull_cache.hpp"

namespace sonde::cli {
namespace {

namespace fs = std::filesystem;

// Exit statuses of sonde's own failures, as env(1) and timeout(1) use them, so
// that they rarely collide with the program's.
constexpr int kSetupFailed = 125;

struct RunOptions {
  std::string out;
  std::string writer;
  std::string to;  // HOST:PORT of a TCP receiver (sonde collect, Kieker)
  std::string config;
  std::vector<std::string> sets;
  bool no_preload = false;
  bool cull = false;           // --cull: cull = auto (docs/cull.md)
  bool no_cull_cache = false;  // --no-cull-cache: neither read nor update it
  std::vector<std::string> command;
};

// A problem found before the program starts; the message is printed as is.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string trim(std::string s) {
  const char* space = " \t\r\n";
  size_t begin = s.find_first_not_of(space);
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(space) - begin + 1);
}

// ---- Locating libsonde ------------------------------------------------------

// The two libraries `sonde run` preloads, in LD_PRELOAD order: the
// interposers (libsonde-preload) and libsonde. Both are named, not just
// the preload library that depends on libsonde: ld.so would load libsonde
// only after the program's own libraries then, behind glibc, whose no-op
// -finstrument-functions hooks would win over libsonde's.
const char* const kMonitorLibraries[] = {"libsonde-preload.so", "libsonde.so"};

// Installed layout first (<prefix>/bin/sonde next to <prefix>/<libdir>), so an
// installed sonde never picks up a stale build tree; then the build tree.
// Both libraries come from the same directory, which holds libsonde.
std::vector<fs::path> find_monitor_libraries() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  fs::path libdir(SONDE_INSTALL_LIBDIR);
  if (libdir.is_absolute()) {
    dirs.push_back(libdir);
  } else if (!ec) {
    dirs.push_back(exe.parent_path().parent_path() / libdir);
  }
  dirs.push_back(fs::path(SONDE_BUILD_LIBDIR));
  std::string tried;
  for (const fs::path& dir : dirs) {
    if (!fs::is_regular_file(dir / "libsonde.so", ec)) {
      tried += "\n  " + (dir / "libsonde.so").string();
      continue;
    }
    std::vector<fs::path> libraries;
    for (const char* name : kMonitorLibraries) {
      const fs::path library = dir / name;
      if (!fs::is_regular_file(library, ec)) {
        throw SetupError("found libsonde.so in " + dir.lexically_normal().string() + " but not " +
                         name + " next to it (install both, or rebuild)");
      }
      libraries.push_back(library.lexically_normal());
    }
    return libraries;
  }
  throw SetupError("cannot find libsonde.so; looked in:" + tried +
                   "\n(use --no-preload if the program links libsonde and libsonde-preload "
                   "itself)");
}

// ---- Settings ---------------------------------------------------------------

// --set key=value pairs in order; a later one for the same key wins.
std::map<std::string, std::string> parse_sets(const RunOptions& o) {
  std::map<std::string, std::string> sets;
  for (const std::string& item : o.sets) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw SetupError("--set '" + item + "': expected key=value, e.g. --set buffer_events=4096");
    }
    std::string key = trim(item.substr(0, eq));
    if (key.empty()) throw SetupError("--set '" + item + "': the key is empty");
    // SONDE_CONFIG names the file rather than being a key; --config checks it.
    if (key == "config") throw SetupError("--set config=...: use --config FILE instead");
    sets[key] = trim(item.substr(eq + 1));
  }
  // --out and --writer are shorthands for --set out=/writer=; both at once is ambiguous.
  auto shorthand = [&sets](const char* key, const std::string& value,
                           const std::string& flag = "") {
    if (value.empty()) return;
    auto it = sets.find(key);
    if (it != sets.end() && it->second != value) {
      throw SetupError((flag.empty() ? std::string("--") + key : flag) + " and --set " + key +
                       "= disagree; give one");
    }
    sets[key] = value;
  };
  shorthand("out", o.out);
  shorthand("writer", o.writer);
  if (!o.to.empty()) {
    // --to HOST:PORT: the TCP writer's receiver; implies --writer tcp.
    const size_t colon = o.to.rfind(':');
    const std::string host = colon == std::string::npos ? "" : o.to.substr(0, colon);
    const std::string port = colon == std::string::npos ? "" : o.to.substr(colon + 1);
    int port_number = 0;
    const bool port_ok = !port.empty() && port.size() <= 5 &&
                         port.find_first_not_of("0123456789") == std::string::npos &&
                         (port_number = std::stoi(port)) > 0 && port_number < 65536;
    if (host.empty() || !port_ok) {
      throw SetupError("--to '" + o.to + "': expected HOST:PORT, e.g. --to 127.0.0.1:10133");
    }
    shorthand("writer", "tcp", "--to");
    shorthand("tcp_host", host, "--to");
    shorthand("tcp_port", port, "--to");
  }
  return sets;
}

// The value a config file gives `key` (the last line wins, as in libsonde), or "".
// Only what sonde run reports on is read: out, writer and enabled.
std::string config_file_value(const fs::path& file, const std::string& key) {
  std::ifstream in(file);
  std::string line, value;
  while (std::getline(in, line)) {
    line = trim(line);
    size_t eq = line.find('=');
    if (line.empty() || line.front() == '#' || eq == std::string::npos) continue;
    if (trim(line.substr(0, eq)) == key) value = trim(line.substr(eq + 1));
  }
  return value;
}

// What libsonde will use for `key`: --set (or its shorthand), then the
// environment, then the config file, then the built-in default.
std::string effective_setting(const std::map<std::string, std::string>& sets,
                              const std::optional<fs::path>& config_file, const std::string& key,
                              const std::string& fallback) {
  if (auto it = sets.find(key); it != sets.end()) return it->second;
  std::string env_name = "SONDE_" + key;
  for (char& ch : env_name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (const char* env = std::getenv(env_name.c_str()); env != nullptr && *env != '\0') return env;
  if (config_file) {
    if (std::string v = config_file_value(*config_file, key); !v.empty()) return v;
  }
  return fallback;
}

// The config file libsonde will read: --config, SONDE_CONFIG, or ./sonde.conf.
std::optional<fs::path> resolve_config(const RunOptions& o) {
  std::string path = o.config;
  bool explicit_file = true;
  if (path.empty()) {
    const char* env = std::getenv("SONDE_CONFIG");
    path = env != nullptr ? env : "";
  }
  if (path.empty()) {
    explicit_file = false;
    path = "sonde.conf";
  }
  std::error_code ec;
  if (!explicit_file) {
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    return fs::absolute(path, ec);
  }
  const std::string origin = o.config.empty() ? " (from SONDE_CONFIG)" : "";
  if (!fs::exists(path, ec)) throw SetupError("config file '" + path + "' does not exist" + origin);
  if (!fs::is_regular_file(path, ec)) {
    throw SetupError("config file '" + path + "' is not a file" + origin);
  }
  if (std::ifstream probe(path); !probe) {
    throw SetupError("cannot read config file '" + path + "': " + std::strerror(errno) + origin);
  }
  return fs::absolute(path, ec).lexically_normal();
}

// Creates `dir` and proves it writable by creating a file in it: permission
// bits say nothing for root, and a read-only mount only shows on writing.
void prepare_out_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw SetupError("cannot create output directory '" + dir.string() + "': " + ec.message());
  }
  if (!fs::is_directory(dir, ec)) {
    throw SetupError("output directory '" + dir.string() + "' is not a directory");
  }
  std::string probe = (dir / ".sonde-run-XXXXXX").string();
  int fd = mkstemp(probe.data());
  if (fd < 0) {
    throw SetupError("cannot write to output directory '" + dir.string() +
                     "': " + std::strerror(errno));
  }
  close(fd);
  unlink(probe.c_str());
}

void set_env(const std::string& name, const std::string& value) {
  if (setenv(name.c_str(), value.c_str(), 1) != 0) {
    throw SetupError("cannot set " + name + ": " + std::strerror(errno));
  }
}

void preload(const std::vector<fs::path>& libraries) {
  std::string value;
  for (const fs::path& lib : libraries) {
    const std::string path = lib.string();
    // ld.so splits LD_PRELOAD at spaces and colons; such a path cannot be preloaded.
    if (path.find_first_of(" :") != std::string::npos) {
      throw SetupError("cannot preload '" + path + "': its path contains a space or colon");
    }
    value += (value.empty() ? "" : ":") + path;
  }
  const char* existing = std::getenv("LD_PRELOAD");
  if (existing != nullptr && *existing != '\0') value += std::string(":") + existing;
  set_env("LD_PRELOAD", value);
}

// ---- Reporting the logs -------------------------------------------------------

using Snapshot = std::map<std::string, fs::file_time_type>;

// Names and modification times of the visible entries of `dir`.
Snapshot snapshot(const fs::path& dir) {
  Snapshot entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name.front() == '.') continue;
    entries[name] = it->last_write_time(ec);
  }
  return entries;
}

// True if `name` holds "-<pid>" not followed by another digit
// (app-1234.sonde, kieker-app-1234/, but not app-12345.sonde).
bool names_pid(const std::string& name, pid_t pid) {
  const std::string tag = "-" + std::to_string(pid);
  for (size_t at = name.find(tag); at != std::string::npos; at = name.find(tag, at + 1)) {
    size_t after = at + tag.size();
    if (after == name.size() || !std::isdigit(static_cast<unsigned char>(name[after]))) return true;
  }
  return false;
}

// cull = auto's reports (<application>-<pid>.cull.txt, docs/cull.md).
bool is_cull_report(const std::string& name) {
  const std::string suffix = ".cull.txt";
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Points to the cull reports written during the run: each is a patterns
// file for the next run. Returns their paths.
std::vector<fs::path> report_cull(const fs::path& dir, const Snapshot& before) {
  std::vector<fs::path> reports;
  for (const auto& [name, mtime] : snapshot(dir)) {
    auto old = before.find(name);
    if (!is_cull_report(name) || (old != before.end() && old->second == mtime)) continue;
    std::cerr << "sonde: cull report written to " << (dir / name).string()
              << " (next run: --set patterns_file=" << (dir / name).string() << ")\n";
    reports.push_back(dir / name);
  }
  if (reports.empty()) std::cerr << "sonde: no cull report: the program made no monitored call\n";
  return reports;
}

// The cache file of what --cull culled in earlier runs of this build of
// the program (cull_cache.hpp), or empty when there is none to use: the
// executable cannot be found or read, no cache folder can be named, or the
// user chose the patterns file.
fs::path cull_cache_file(const RunOptions& o, bool user_patterns_file) {
  if (!o.cull || o.no_cull_cache) return {};
  if (user_patterns_file) {
    std::cerr << "sonde: cull: patterns_file is set, so what earlier --cull runs culled is not "
                 "used (docs/cull.md, \"Across runs\")\n";
    return {};
  }
  const std::optional<fs::path> exe = resolve_executable(o.command.front());
  const std::string key = exe ? executable_key(*exe) : "";
  const fs::path dir = cull_cache_dir();
  if (key.empty() || dir.empty()) return {};
  return dir / (key + ".patterns");
}

// After the run: the union of what the cache held and what this run's
// reports culled becomes the cache.
void remember_culled(const fs::path& cache, const std::vector<fs::path>& reports,
                     const std::string& program) {
  std::set<std::string> exclusions;  // sorted, each once
  for (std::string& line : excluded_patterns(cache)) exclusions.insert(std::move(line));
  const size_t before = exclusions.size();
  for (const fs::path& report : reports) {
    for (std::string& line : excluded_patterns(report)) exclusions.insert(std::move(line));
  }
  if (exclusions.empty()) return;
  const std::vector<std::string> lines(exclusions.begin(), exclusions.end());
  if (std::string e = write_cull_cache(cache, lines, program); !e.empty()) {
    std::cerr << "sonde: cull: not remembered for the next run: " << e << "\n";
    return;
  }
  std::cerr << "sonde: cull: " << lines.size()
            << " functions remembered for the next --cull run of " << program << " ("
            << lines.size() - before << " new; " << cache.string() << ")\n";
}

// Entries created or modified during the run: the program's own log (named
// after its pid) and those of processes it forked. Comparing with a snapshot
// rather than a start time avoids the file system's coarse timestamps.
void report_logs(const fs::path& dir, const Snapshot& before, pid_t pid, bool preloaded,
                 bool disabled, bool flight) {
  std::vector<std::string> own, others;
  for (const auto& [name, mtime] : snapshot(dir)) {
    auto old = before.find(name);
    if (old != before.end() && old->second == mtime) continue;
    if (is_cull_report(name)) continue;  // reported by report_cull
    (names_pid(name, pid) ? own : others).push_back((dir / name).string());
  }
  for (const std::string& path : own) std::cerr << "sonde: log written to " << path << "\n";
  for (const std::string& path : others) {
    std::cerr << "sonde: log written to " << path
              << " (by another process during the run, e.g. a forked child)\n";
  }
  if (own.empty() && others.empty()) {
    std::cerr << "sonde: no log was written to " << dir.string() << " by process " << pid << ": ";
    if (disabled) {
      std::cerr << "monitoring is disabled (enabled=false)\n";
    } else if (flight) {
      std::cerr << "the flight recorder (flight = on) writes only snapshots, and none was asked "
                   "for (docs/flight-recorder.md)\n";
    } else {
      std::cerr << "the program has no probes (neither SONDE_SCOPE/sonde_begin nor "
                   "-finstrument-functions), "
                << (preloaded ? "or is statically linked so libsonde could not be preloaded, "
                              : "or does not link libsonde (--no-preload), ")
                << "or monitoring was disabled (see libsonde's message above)\n";
    }
  }
}

// ---- The command ------------------------------------------------------------

int run(const RunOptions& o) {
  std::map<std::string, std::string> sets = parse_sets(o);
  std::optional<fs::path> config_file = resolve_config(o);
  const std::string writer = effective_setting(sets, config_file, "writer", "native");
  const std::string enabled = effective_setting(sets, config_file, "enabled", "true");
  const bool disabled = enabled == "false" || enabled == "0" || enabled == "no" || enabled == "off";
  const bool flight = effective_setting(sets, config_file, "flight", "off") == "on";
  std::error_code ec;
  const fs::path out = fs::absolute(effective_setting(sets, config_file, "out", "sonde-logs"), ec)
                           .lexically_normal();
  // tcp and null write no files, so they need no directory.
  const bool writes_files = writer != "tcp" && writer != "null";
  if (writes_files || o.cull) prepare_out_dir(out);
  if (o.cull && sets.count("cull") == 0) sets["cull"] = "auto";
  const fs::path cull_cache =
      cull_cache_file(o, !effective_setting(sets, config_file, "patterns_file", "").empty());
  if (!cull_cache.empty()) {
    const size_t remembered = excluded_patterns(cull_cache).size();
    if (remembered > 0) {
      sets["patterns_file"] = cull_cache.string();
      // libsonde applies `patterns`, then the file, and the last matching
      // rule wins: the run's own rules go last, so that they pin.
      const std::string own = effective_setting(sets, config_file, "patterns", "");
      if (!own.empty()) {
        const fs::path start = out / "cull-start.patterns";
        std::ofstream file(start, std::ios::trunc);
        file << std::ifstream(cull_cache).rdbuf()
             << "\n# this run's own patterns, last so that they decide:\n"
             << own << "\n";
        if (file.flush()) sets["patterns_file"] = start.string();
      }
      std::cerr << "sonde: cull: starting with " << remembered
                << " functions culled in earlier runs of this build (" << cull_cache.string()
                << "; --no-cull-cache starts afresh)\n";
    }
  }

  if (!o.no_preload) preload(find_monitor_libraries());
  // SONDE_OUT is always set, absolute, so libsonde writes where we look.
  sets["out"] = out.string();
  if (!o.config.empty()) set_env("SONDE_CONFIG", config_file->string());
  for (const auto& [key, value] : sets) {
    std::string name = "SONDE_" + key;
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    set_env(name, value);
  }

  const Snapshot before = writes_files || o.cull ? snapshot(out) : Snapshot{};
  Launch child = launch(o.command);
  const std::string& program = o.command.front();
  if (child.exec_errno != 0) {
    wait_for_child(child.pid);
    std::cerr << "sonde: cannot execute '" << program << "': " << std::strerror(child.exec_errno)
              << "\n";
    if (program.find('=') != std::string::npos && program.find('/') == std::string::npos) {
      std::cerr << "sonde: (each --set takes one key=value; repeat --set for more, and put -- "
                   "before the program)\n";
    }
    return kCannotExecute;
  }

  int status = wait_for_child(child.pid);
  int exit_code = 0;
  if (status < 0) {
    std::cerr << "sonde: lost track of '" << program << "' (pid " << child.pid
              << "): " << std::strerror(errno) << "\n";
    exit_code = kSetupFailed;
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::cerr << "sonde: '" << program << "' was killed by " << describe_signal(sig)
              << (WCOREDUMP(status) ? ", core dumped" : "") << "\n";
    exit_code = 128 + sig;
  } else {
    exit_code = WEXITSTATUS(status);
  }

  if (writes_files) {
    report_logs(out, before, child.pid, !o.no_preload, disabled, flight);
  } else {
    std::cerr << "sonde: writer '" << writer << "' writes no log file"
              << (writer == "tcp" ? " (records went to the TCP receiver)" : "") << "\n";
  }
  if (o.cull) {
    const std::vector<fs::path> reports = report_cull(out, before);
    if (!cull_cache.empty()) remember_culled(cull_cache, reports, program);
  }
  return exit_code;
}

void setup_run(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunOptions>();
  app.add_option("--out", o->out,
                 "Directory for the log, created if missing (default: the config's 'out', else "
                 "./sonde-logs)");
  app.add_option("--writer", o->writer, "native | kieker-dat | kieker-bin | tcp | null")
      ->check(CLI::IsMember({"native", "kieker-dat", "kieker-bin", "tcp", "null"}));
  app.add_option("--to", o->to,
                 "Stream the records to a TCP receiver (sonde collect, Kieker) at HOST:PORT; "
                 "implies --writer tcp");
  app.add_option("--config", o->config, "Config file of 'key = value' lines (sets SONDE_CONFIG)");
  app.add_option("--set", o->sets,
                 "Set one config key for this run (SONDE_<KEY>), e.g. --set buffer_events=4096; "
                 "repeatable")
      ->allow_extra_args(false);
  app.add_flag("--cull", o->cull,
               "Cull: after a first phase, stop monitoring the functions called often whose own "
               "mean duration is under cull_max_ns (2 us), and patch their hook calls to NOPs "
               "(cull=auto; thresholds: --set cull_max_ns=..., docs/cull.md)");
  app.add_flag("--no-cull-cache", o->no_cull_cache,
               "With --cull: do not start with what earlier --cull runs of this build culled, "
               "and do not remember this run's (docs/cull.md, \"Across runs\")");
  app.add_flag("--no-preload", o->no_preload,
               "Do not preload libsonde and libsonde-preload (for programs linked with them)");
  app.add_option("command", o->command, "The program and its arguments")->required();
  // Everything from the program's name on belongs to the program, even options.
  app.positionals_at_end();
  app.footer(
      "Example: sonde run --out logs -- ./server --port 8080\n"
      "Exit status: the program's; 128+N if signal N killed it; 127 if it cannot be executed; "
      "125 if sonde run itself fails.");
  app.callback([o, &exit_code] {
    try {
      exit_code = run(*o);
    } catch (const LaunchError& e) {
      std::cerr << "sonde run: " << e.what() << "\n";
      exit_code = kSetupFailed;
    } catch (const SetupError& e) {
      std::cerr << "sonde run: " << e.what() << "\n";
      exit_code = kSetupFailed;
    }
  });
}

}  // namespace

SONDE_COMMAND("run", "Run a program under monitoring (preloads libsonde) and report its log",
              setup_run);

}  // namespace sonde::cli
