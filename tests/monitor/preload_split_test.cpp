// libsonde and libsonde-preload (docs/probes.md, "Two libraries"): libsonde
// defines no function of anyone else's, so a program linked with it alone
// keeps the real pthread_mutex_lock, sqlite3_step, __cxa_throw, dlclose, ...
// and gets no lock waits, queries or exception causes; with the preload
// library (linked or preloaded) it gets all three. Also SONDE_ENABLE=0:
// programs that use every probe build without libsonde and write nothing.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "format/callable_schemas.hpp"
#include "format/diagnostic_schemas.hpp"
#include "run_helpers.hpp"

namespace sonde::test {
namespace {

const std::string kSplitLibsonde = kPrograms + "/test_split_libsonde";
const std::string kSplitPreload = kPrograms + "/test_split_preload";

// What libsonde-preload interposes, as the dynamic symbol table names it.
const std::set<std::string> kSplitInterposed = {
    "pthread_mutex_lock",
    "sqlite3_step",
    "sqlite3_reset",
    "sqlite3_finalize",
    "sqlite3_exec",
    "PQexec",
    "PQexecParams",
    "PQexecPrepared",
    "__cxa_throw",
    "__cxa_rethrow",
    "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE",
    "dlclose",
    "longjmp",
    "_longjmp",
    "siglongjmp",
    "__longjmp_chk",
    "_exit",
    "_Exit"};

// Names of `nm -D <which>` of `file` (versions stripped).
std::set<std::string> split_dynamic_symbols(const std::string& file, const std::string& which) {
  std::set<std::string> names;
  const std::string command = "nm -D " + which + " '" + file + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return names;
  }
  char line[4096];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::istringstream words(line);
    std::string word, last;
    while (words >> word) last = word;
    names.insert(last.substr(0, last.find('@')));
  }
  EXPECT_EQ(pclose(pipe), 0) << command;
  return names;
}

// "binding <symbol> <file>" lines: symbol -> file name (no directory).
std::map<std::string, std::string> split_bindings(const std::vector<std::string>& env,
                                                  const std::string& program) {
  RunResult r = run_program({program, "bindings"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  std::map<std::string, std::string> out;
  std::istringstream in(r.stderr_text);
  std::string word, symbol, file;
  while (in >> word) {
    if (word == "binding" && in >> symbol >> file) {
      out[symbol] = std::filesystem::path(file).filename().string();
    }
  }
  return out;
}

// In the sanitizer builds (ASan, TSan) the sanitizer's runtime is first in
// every program's link order and intercepts many of the same functions
// (pthread_mutex_lock, longjmp, __cxa_throw, dlclose): those bind to it
// whatever sonde does, so only the functions it leaves alone can show
// sonde's binding there. A plain build never loads these runtimes.
bool bound_to_sanitizer(const std::string& file) {
  return file.rfind("libasan.so", 0) == 0 || file.rfind("libtsan.so", 0) == 0;
}

TEST(PreloadSplit, LibsondeExportsNoInterposerOnlyItsApiAndTheInternalAbi) {
  const std::set<std::string> libsonde = split_dynamic_symbols(SONDE_LIBRARY, "--defined-only");
  ASSERT_TRUE(libsonde.count("sonde_begin")) << "nm read nothing useful from " << SONDE_LIBRARY;
  for (const std::string& name : kSplitInterposed) {
    EXPECT_FALSE(libsonde.count(name)) << "libsonde defines " << name;
  }
  // The internal ABI is exactly what monitor/preload_abi.hpp declares.
  std::set<std::string> internal;
  for (const std::string& name : libsonde) {
    if (name.rfind("sonde_internal_", 0) == 0) internal.insert(name);
  }
  const std::set<std::string> declared = {
      "sonde_internal_before_code_unload", "sonde_internal_before_immediate_exit",
      "sonde_internal_count_throw",        "sonde_internal_diagnostics_accepting",
      "sonde_internal_emit_diagnostic",    "sonde_internal_longjmp",
      "sonde_internal_note_throw",         "sonde_internal_probe_busy",
      "sonde_internal_probe_switches",     "sonde_internal_trace_position"};
  EXPECT_EQ(internal, declared);

  const std::set<std::string> preload =
      split_dynamic_symbols(SONDE_PRELOAD_LIBRARY, "--defined-only");
  for (const std::string& name : kSplitInterposed) {
    EXPECT_TRUE(preload.count(name)) << "libsonde-preload does not define " << name;
  }
  // It reaches libsonde through that ABI and the public API only.
  for (const std::string& name : split_dynamic_symbols(SONDE_PRELOAD_LIBRARY, "--undefined-only")) {
    if (name.find("sonde") == std::string::npos) continue;
    EXPECT_TRUE(declared.count(name) || name == "sonde_probe_gate") << name;
  }
}

TEST(PreloadSplit, ProgramLinkedWithLibsondeOnlyKeepsTheRealFunctions) {
  const auto bound = split_bindings({"SONDE_ENABLED=false"}, kSplitLibsonde);
  for (const std::string& name : kSplitInterposed) {
    if (name.rfind("PQ", 0) == 0) continue;  // libpq is not loaded
    ASSERT_TRUE(bound.count(name)) << name << " not found";
    EXPECT_EQ(bound.at(name).find("libsonde"), std::string::npos)
        << name << " binds to " << bound.at(name);
  }
  auto expect_bound = [&](const std::string& name, const std::string& file) {
    if (!bound_to_sanitizer(bound.at(name))) {
      EXPECT_EQ(bound.at(name), file) << name;
    }
  };
  expect_bound("pthread_mutex_lock", "libc.so.6");
  expect_bound("sqlite3_step", "libsqlite3.so.0");
  expect_bound("__cxa_throw", "libstdc++.so.6");
  expect_bound("dlclose", "libc.so.6");
}

void expect_split_bound_to_preload(const std::map<std::string, std::string>& bound) {
  for (const std::string& name : kSplitInterposed) {
    if (name.rfind("PQ", 0) == 0) continue;
    ASSERT_TRUE(bound.count(name)) << name << " not found";
    if (bound_to_sanitizer(bound.at(name))) continue;
    EXPECT_EQ(bound.at(name).rfind("libsonde-preload.so", 0), 0u)
        << name << " binds to " << bound.at(name);
  }
}

TEST(PreloadSplit, LinkedPreloadLibraryTakesEveryInterposedFunction) {
  expect_split_bound_to_preload(split_bindings({"SONDE_ENABLED=false"}, kSplitPreload));
}

TEST(PreloadSplit, PreloadedLibraryTakesEveryInterposedFunction) {
  expect_split_bound_to_preload(
      split_bindings({"SONDE_ENABLED=false",
                      std::string("LD_PRELOAD=") + SONDE_PRELOAD_LIBRARY + ":" + SONDE_LIBRARY},
                     kSplitLibsonde));
}

struct SplitRun {
  RunResult result;
  LogContents contents;
  std::map<std::string, std::string> causes;  // failed operation -> cause
};

SplitRun split_work(const std::string& name, const std::string& program,
                    std::vector<std::string> env) {
  SplitRun run;
  const std::string out = fresh_dir(name);
  env.push_back("SONDE_PROBE_LOCK_WAIT=true");
  env.push_back("SONDE_PROBE_DATABASE=true");
  run.result = run_program({program, "work"}, env_for(out, env));
  EXPECT_EQ(run.result.exit_code, 0) << run.result.stderr_text;
  EXPECT_NE(run.result.stderr_text.find("work done"), std::string::npos) << run.result.stderr_text;
  const auto logs = files_with_suffix(out, ".sonde");
  if (logs.size() != 1) {
    ADD_FAILURE() << logs.size() << " logs in " << out << ": " << run.result.stderr_text;
    return run;
  }
  run.contents = read_contents(logs[0]);
  EXPECT_TRUE(run.contents.stats.ok);
  for (const auto& [id, trace] : run.contents.traces) {
    EXPECT_EQ(trace_problem(trace), "");
    for (const FlowEventCopy& e : trace.events) {
      if (e.kind == "failed") run.causes[e.operation] = e.cause;
    }
  }
  return run;
}

int64_t split_records(const SplitRun& run, std::string_view record_class) {
  auto it = run.contents.records_by_class.find(std::string(record_class));
  return it == run.contents.records_by_class.end() ? 0 : it->second;
}

// The causes of the three scopes the program's exceptions leave.
void expect_split_causes(const SplitRun& run) {
  std::string listing;
  for (const auto& [op, cause] : run.causes) listing += op + " -> " + cause + "\n";
  EXPECT_EQ(run.causes.size(), 3u) << listing;
  EXPECT_EQ(run.causes.count("split.throw") ? run.causes.at("split.throw") : "",
            "std::runtime_error: boom")
      << listing;
  EXPECT_EQ(run.causes.count("split.rethrow") ? run.causes.at("split.rethrow") : "",
            "std::logic_error: again")
      << listing;
  EXPECT_EQ(
      run.causes.count("split.rethrow_exception") ? run.causes.at("split.rethrow_exception") : "",
      "std::runtime_error: from worker")
      << listing;
}

TEST(PreloadSplit, LibsondeAloneRecordsNoLockWaitsQueriesOrCausesAndSaysWhy) {
  SplitRun run = split_work("split_libsonde_only", kSplitLibsonde, {});
  EXPECT_EQ(split_records(run, format::diagnostic_class::kLockWait), 0);
  EXPECT_EQ(split_records(run, format::callable_class::kDatabaseCall), 0);
  // Without __cxa_throw interposed every scope ends normally.
  EXPECT_EQ(run.contents.failed, 0);
  EXPECT_EQ(run.contents.before, 5);
  EXPECT_EQ(run.contents.after, 5);
  EXPECT_NE(run.result.stderr_text.find("sonde: probe_lock_wait: libsonde-preload.so"),
            std::string::npos)
      << run.result.stderr_text;
  EXPECT_NE(run.result.stderr_text.find("sonde: probe_database: libsonde-preload.so"),
            std::string::npos)
      << run.result.stderr_text;
}

void expect_split_everything_recorded(const SplitRun& run) {
  EXPECT_EQ(split_records(run, format::diagnostic_class::kLockWait), 1);
  EXPECT_EQ(split_records(run, format::callable_class::kDatabaseCall), 1);
  EXPECT_EQ(run.contents.before, 5);
  EXPECT_EQ(run.contents.failed, 3);
  expect_split_causes(run);
  EXPECT_EQ(run.result.stderr_text.find("sonde: probe_"), std::string::npos)
      << run.result.stderr_text;
}

TEST(PreloadSplit, LinkedPreloadLibraryRecordsLockWaitsQueriesAndCauses) {
  expect_split_everything_recorded(split_work("split_linked", kSplitPreload, {}));
}

TEST(PreloadSplit, PreloadedLibraryRecordsLockWaitsQueriesAndCauses) {
  expect_split_everything_recorded(
      split_work("split_preloaded", kSplitLibsonde,
                 {std::string("LD_PRELOAD=") + SONDE_PRELOAD_LIBRARY + ":" + SONDE_LIBRARY}));
}

// Monitoring off: throws are counted but not noted; nothing is written
// and the program runs as without sonde.
TEST(PreloadSplit, WithMonitoringOffThePreloadLibraryStaysOutOfTheWay) {
  const std::string out = fresh_dir("split_off");
  RunResult r = run_program({kSplitPreload, "work"},
                            {"SONDE_OUT=" + out, "SONDE_ENABLED=false",
                             "SONDE_PROBE_LOCK_WAIT=true", "SONDE_PROBE_DATABASE=true"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("work done"), std::string::npos) << r.stderr_text;
  EXPECT_TRUE(files_with_suffix(out, ".sonde").empty());
}

// ---------------------------------------------------------------------------
// SONDE_ENABLE=0.

TEST(SondeDisabled, ProgramsBuildWithoutLibsondeAndWriteNothing) {
  for (const char* name : {"test_sonde_disabled", "test_sonde_disabled_c"}) {
    const std::string program = kPrograms + "/" + name;
    // Nothing of libsonde's is even referenced.
    for (const std::string& symbol : split_dynamic_symbols(program, "--undefined-only")) {
      EXPECT_EQ(symbol.find("sonde"), std::string::npos) << name << " needs " << symbol;
    }
    const std::string dir = fresh_dir(std::string("disabled_") + name);
    const std::string out = dir + "/logs";
    RunResult r = run_program({program}, {"SONDE_OUT=" + out, "SONDE_SUMMARY=true"});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("disabled ok"), std::string::npos)
        << name << ": " << r.stderr_text;
    EXPECT_EQ(r.stderr_text.find("sonde:"), std::string::npos) << name << ": " << r.stderr_text;
    EXPECT_FALSE(std::filesystem::exists(out)) << name << " created " << out;
  }
}

}  // namespace
}  // namespace sonde::test
