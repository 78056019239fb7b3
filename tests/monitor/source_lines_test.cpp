// Source lines in the log (docs/configuration.md, `source_lines`): off by
// default, an OPERATION item names a function and its module and leaves
// file and line empty (reading DWARF line tables stalled the writer at a
// program's start); with source_lines = true it carries the function's
// source file and line. test_autoinst is built with line tables (the
// build's -g1) and monitored through the preloaded libsonde.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "format/native_reader.hpp"
#include "run_helpers.hpp"

namespace sonde::test {
namespace {

struct FunctionSource {
  std::string file;
  uint32_t line = 0;
};

class FunctionSourceCollector final : public format::NativeVisitor {
 public:
  void on_operation(const format::NativeOperation& op) override {
    by_name[std::string(op.name)] = {std::string(op.file), op.line};
  }
  std::map<std::string, FunctionSource> by_name;
};

// The sources of the functions test_autoinst's log names, by name.
std::map<std::string, FunctionSource> function_sources_of_a_run(
    const std::string& test, std::vector<std::string> extra_env) {
  std::string out = fresh_dir(test);
  extra_env.push_back(std::string("LD_PRELOAD=") + SONDE_LIBRARY);
  RunResult r = run_program({kPrograms + "/test_autoinst", "5"}, env_for(out, extra_env));
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  FunctionSourceCollector sources;
  format::NativeReadResult read =
      format::read_native_file(files_with_suffix(out, ".sonde").at(0), sources);
  EXPECT_TRUE(read.error.empty()) << read.error;
  return sources.by_name;
}

// The entry whose name contains `needle`, or null.
const FunctionSource* source_named(const std::map<std::string, FunctionSource>& m,
                                   const std::string& needle) {
  for (const auto& [name, source] : m) {
    if (name.find(needle) != std::string::npos) return &source;
  }
  return nullptr;
}

TEST(SourceLines, OffByDefaultTheLogNamesFunctionsWithoutSourceLines) {
  auto sources = function_sources_of_a_run("source_lines_default", {});
  const FunctionSource* twice = source_named(sources, "twice(int)");
  ASSERT_NE(twice, nullptr) << "the static function is named without source lines";
  for (const auto& [name, source] : sources) {
    EXPECT_EQ(source.file, "") << name;
    EXPECT_EQ(source.line, 0u) << name;
  }
}

TEST(SourceLines, WhenAskedEachFunctionCarriesItsSourceFileAndLine) {
  auto sources = function_sources_of_a_run("source_lines_on", {"SONDE_SOURCE_LINES=true"});
  for (const char* needle : {"twice(int)", "countdown(int)", "geometry::Square::area(int)"}) {
    const FunctionSource* s = source_named(sources, needle);
    ASSERT_NE(s, nullptr) << needle;
    EXPECT_NE(s->file.find("autoinst.cpp"), std::string::npos) << needle << ": " << s->file;
    EXPECT_GT(s->line, 0u) << needle;
  }
  // In the shared library: its own source file.
  const FunctionSource* area = source_named(sources, "shapes_area");
  ASSERT_NE(area, nullptr);
  EXPECT_NE(area->file.find("autoinst_lib.cpp"), std::string::npos) << area->file;
}

}  // namespace
}  // namespace sonde::test
