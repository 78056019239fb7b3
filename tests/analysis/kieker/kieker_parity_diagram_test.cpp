// Kieker's diagrams: sequence diagrams (.pic), per-trace and aggregated
// call trees (.dot), against the files Kieker's trace-analysis wrote for the
// same logs; and sonde's own SVG sequence diagrams.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>

#include "analysis/kieker/sequence_diagram_pic.hpp"
#include "kieker/kieker_parity_support.hpp"

extern char** environ;

namespace sonde::analysis {
namespace {

using namespace parity;

// Golden files whose names match `pattern`, by name.
std::map<std::string, std::string> golden_files(const std::string& log,
                                                const std::string& pattern) {
  const std::regex re(pattern);
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::directory_iterator(golden_dir(log))) {
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, re)) out[name] = read_file(entry.path());
  }
  return out;
}

std::unordered_set<int64_t> ids_in_names(const std::map<std::string, std::string>& files) {
  static const std::regex re(R"(-(\d+)\.\w+$)");
  std::unordered_set<int64_t> ids;
  for (const auto& [name, text] : files) {
    std::smatch m;
    if (std::regex_search(name, m, re)) ids.insert(std::stoll(m[1]));
  }
  return ids;
}

// The diagram proper: Kieker's files carry UMLGraph's macro definitions in
// front of it, sonde's its own (docs/analysis/kieker-parity.md).
std::string pic_body(const std::string& pic) {
  const size_t start = pic.find("\nboxwid = 1.1;\n");
  return start == std::string::npos ? "" : pic.substr(start + 1);
}

TEST(KiekerParityDiagram, BookstoreSequenceDiagramBodiesAreKiekers) {
  const auto golden =
      golden_files("bookstore-oer-2010", R"((assembly|deployment)SequenceDiagram-\d+\.pic)");
  ASSERT_EQ(golden.size(), 8u);
  KiekerOutputOptions o;
  o.deployment_sequence_diagrams = true;
  o.assembly_sequence_diagrams = true;
  o.short_labels = true;
  const ParityRun run = run_parity("bookstore-oer-2010", o, ids_in_names(golden));
  for (const auto& [name, text] : golden) {
    ASSERT_TRUE(run.files.count(name)) << name;
    const std::string& ours = run.files.at(name);
    EXPECT_EQ(ours.rfind(".PS\n", 0), 0u) << name;
    ASSERT_FALSE(pic_body(text).empty()) << name;
    EXPECT_EQ(pic_body(ours), pic_body(text)) << name;
  }
  EXPECT_EQ(run.files.size(), golden.size());
}

TEST(KiekerParityDiagram, BookstoreCallTreesAreKiekersBytes) {
  const auto golden = golden_files("bookstore-oer-2010", R"(callTree-\d+\.dot)");
  ASSERT_EQ(golden.size(), 4u);
  KiekerOutputOptions o;
  o.call_trees = true;
  o.short_labels = true;
  const ParityRun run = run_parity("bookstore-oer-2010", o, ids_in_names(golden));
  EXPECT_EQ(run.files, golden);
}

TEST(KiekerParityDiagram, AggregatedCallTreesAreKiekersBytes) {
  for (const char* log : {"bookstore-oer-2010", "events-2014"}) {
    const auto golden = golden_files(log, R"(aggregated(Deployment|Assembly)CallTree\.dot)");
    ASSERT_EQ(golden.size(), 2u) << log;
    KiekerOutputOptions o;
    o.aggregated_deployment_call_tree = true;
    o.aggregated_assembly_call_tree = true;
    o.short_labels = true;
    const ParityRun run = run_parity(log, o);
    EXPECT_EQ(run.files, golden) << log;
  }
}

// Runs `program args...` on nothing, stderr captured; returns the exit status.
int run_program(const std::string& program, std::vector<std::string> args, std::string* err) {
  const fs::path err_file =
      fs::temp_directory_path() / ("sonde-parity-" + std::to_string(::getpid()) + ".err");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  args.insert(args.begin(), program);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  *err = read_file(err_file);
  fs::remove(err_file);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(KiekerParityDiagram, OwnPicMacrosRenderWithGnuPic) {
  const std::string gpic = "/usr/bin/gpic";
  if (::access(gpic.c_str(), X_OK) != 0) GTEST_SKIP() << "GNU pic (groff) is not installed";
  KiekerOutputOptions o;
  o.deployment_sequence_diagrams = true;
  o.assembly_sequence_diagrams = true;
  const ParityRun run = run_parity("events-2014", o);
  ASSERT_EQ(run.files.size(), 4u);
  for (const auto& [name, text] : run.files) {
    const fs::path file = fs::temp_directory_path() / ("sonde-parity-" + name);
    std::ofstream(file, std::ios::binary) << text;
    std::string err;
    EXPECT_EQ(run_program(gpic, {file.string()}, &err), 0) << name << "\n" << err;
    EXPECT_EQ(err, "") << name;
    fs::remove(file);
  }
}

TEST(KiekerParityDiagram, SvgSequenceDiagramDrawsEveryMessage) {
  KiekerOutputOptions o;
  o.deployment_sequence_diagrams = true;
  o.sequence_diagram_svg = true;
  o.short_labels = true;
  const ParityRun run = run_parity("events-2014", o);
  const std::string& svg = run.files.at("deploymentSequenceDiagram-3881283897249497088.svg");
  const std::string& pic = run.files.at("deploymentSequenceDiagram-3881283897249497088.pic");
  const auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; pos += what.size()) ++n;
    return n;
  };
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("</svg>\n"), std::string::npos);
  // One arrow per pic message, calls with filled heads, returns with open ones.
  EXPECT_EQ(count(svg, "url(#call)"), count(pic, "\nmessage("));
  EXPECT_EQ(count(svg, "url(#return)"), count(pic, "\nrmessage("));
  EXPECT_EQ(count(pic, "\nmessage("), 3u);  // main, extractNumRequestsFromArgs, spawnAsyncRequest
  EXPECT_NE(svg.find(">main(..)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">@1:..BookstoreStarter</text>"), std::string::npos);
  // Activation bars: the actor's and one per call.
  EXPECT_EQ(count(svg, "<rect x=") - count(pic, "\nobject("), 1 + count(pic, "\nmessage("));
}

}  // namespace
}  // namespace sonde::analysis
