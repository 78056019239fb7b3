// Every view of `sonde` names a native log's operations as C++ users write
// them (format/operation_name.hpp), not in Kieker's form: the summary, the
// trace list and one trace, flame graphs, call trees and dependency graphs,
// calling contexts and the trace exports. Only a Kieker log written from
// it carries Kieker's signatures. The log: tests/cpp_names_log.hpp.
#include <filesystem>
#include <string>
#include <vector>

#include "../cpp_names_log.hpp"
#include "sonde_cli_fixture.hpp"

namespace sonde::test {
namespace {

class CppNames : public SondeCli {
 protected:
  void SetUp() override {
    SondeCli::SetUp();
    log_ = (dir_ / "app.sonde").string();
    ASSERT_TRUE(write_cpp_names_log(log_));
  }
  // What a view printed or wrote, checked for every operation's C++ name
  // and for no trace of Kieker's form or the spelled-out library types.
  static void expect_cpp_names(const std::string& text, const std::string& view) {
    SCOPED_TRACE(view);
    for (const CppNamedOperation& op : kCppNames)
      EXPECT_NE(text.find(op.shown), std::string::npos) << op.shown << "\n" << text;
    expect_no_kieker_form(text);
  }
  static void expect_no_kieker_form(const std::string& text) {
    for (const char* kieker :
         {"shapes.", "std.", "Inventory.", "shapes_app.", "__cxx11", "std::allocator", "Db* std::"})
      EXPECT_EQ(text.find(kieker), std::string::npos) << kieker << "\n" << text;
  }
  std::string log_;
};

TEST_F(CppNames, SummaryAndTraces) {
  CliRun r = sonde({"summary", log_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_cpp_names(r.out, "summary");
  r = sonde({"summary", log_, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_cpp_names(r.out, "summary --format json");

  r = sonde({"traces", log_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" main\n"), std::string::npos) << r.out;  // the root operation
  r = sonde({"traces", log_, "--show", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_cpp_names(r.out, "traces --show");
}

TEST_F(CppNames, FlameGraphsCallTreesAndDependencyGraphs) {
  const std::string folded = (dir_ / "flame.folded").string();
  CliRun r = sonde({"flame", log_, "--out", folded});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string stacks = slurp(folded);
  // Short labels: the owner and the name, "(..)" for parameters.
  EXPECT_NE(stacks.find("main;shapes::total_area(..);Circle::area() "), std::string::npos)
      << stacks;
  EXPECT_NE(stacks.find("main;Inventory::add(..) "), std::string::npos) << stacks;
  EXPECT_NE(stacks.find("main;(anonymous namespace)::report(..) "), std::string::npos) << stacks;
  expect_no_kieker_form(stacks);

  const std::string tree = (dir_ / "tree.dot").string();
  r = sonde({"graph", log_, "--kind", "calltree", "--out", tree});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dot = slurp(tree);
  EXPECT_NE(dot.find("\\nCircle::area()\\n"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\\nmain\\n"), std::string::npos) << dot;
  expect_no_kieker_form(dot);

  const std::string full = (dir_ / "tree-full.dot").string();
  r = sonde({"graph", log_, "--kind", "calltree", "--full-labels", "--out", full});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_cpp_names(slurp(full), "graph --kind calltree --full-labels");

  const std::string deps = (dir_ / "deps.dot").string();
  r = sonde({"graph", log_, "--kind", "dependency", "--full-labels", "--out", deps});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dependency = slurp(deps);
  expect_cpp_names(dependency, "graph --kind dependency --full-labels");
  // A free function's component is its module; a member's is its class.
  EXPECT_NE(dependency.find("<<deployment component>>\\nshapes_app"), std::string::npos)
      << dependency;
  EXPECT_NE(dependency.find("<<deployment component>>\\nshapes::Circle"), std::string::npos)
      << dependency;
}

TEST_F(CppNames, CallingContexts) {
  const CliRun r = sonde({"context", log_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_cpp_names(r.out, "context --json");
}

TEST_F(CppNames, TraceExportsUseThemAndKiekerFilesKeepKiekersForm) {
  const std::string otlp = (dir_ / "spans.json").string();
  CliRun r = sonde({"convert", log_, "--to", "otlp", otlp});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string spans = slurp(otlp);
  EXPECT_NE(spans.find("\"Circle::area()\""), std::string::npos) << spans;
  EXPECT_NE(spans.find("\"Inventory::add(..)\""), std::string::npos) << spans;
  expect_no_kieker_form(spans);

  // Kieker's tools parse Java-style signatures: a Kieker log gets them.
  const fs::path kieker = dir_ / "kieker";
  r = sonde({"convert", log_, "--to", "kieker-dat", kieker.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string records;
  for (const auto& f : fs::directory_iterator(kieker))
    if (f.path().extension() == ".dat") records += slurp(f.path());
  EXPECT_NE(records.find(";shapes.Circle.area() const;"), std::string::npos) << records;
  EXPECT_NE(records.find(";shapes_app.main();"), std::string::npos) << records;
  EXPECT_EQ(records.find("::"), std::string::npos) << records;
}

// `sonde trace-analysis` writes Kieker's own outputs: Kieker's names.
TEST_F(CppNames, KiekerParityOutputsUseKiekersForm) {
  const fs::path out = dir_ / "trace-analysis";
  const CliRun r =
      sonde({"trace-analysis", "-i", log_, "-o", out.string(), "--print-execution-traces"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string traces = slurp(out / "executionTraces.txt");
  EXPECT_NE(traces.find("::@1:Inventory.add "), std::string::npos) << traces;
  EXPECT_NE(traces.find(":shapes.Circle.area "), std::string::npos) << traces;
  EXPECT_NE(traces.find(":shapes_app.main "), std::string::npos) << traces;
  EXPECT_EQ(traces.find("shapes::"), std::string::npos) << traces;
}

}  // namespace
}  // namespace sonde::test
