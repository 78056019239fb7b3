// GET /api/diagnosis over real TCP: a report that `sonde diagnose` code
// writes from planted experiment data (the diagnose tests' generator) is
// served as written, plus what report.html shows of each node (description,
// where to look, plots, certainty in words); every way a report can
// be broken (format tag, JSON syntax, missing keys, wrong types, counts that
// disagree with the tree) is refused naming the file and the key; without a
// report the endpoint answers 404; `sonde serve --diagnosis BAD` exits 1.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "../diagnose/diagnose_test_support.hpp"
#include "analysis/text/xml_escape.hpp"
#include "diagnose/diagnosis.hpp"
#include "diagnose/report.hpp"
#include "http_get.hpp"
#include "serve/diagnosis_report.hpp"
#include "serve_test_support.hpp"
#include "store/memory_store.hpp"

namespace sonde::serve::test {
namespace {

using nlohmann::json;
namespace dt = diagnose::test;

// A load test at 50 users where GET /product needs 2 s (requirement: 1 s at
// P99) and a scaling series growing from 100 ms to 2 s: Performance Problem,
// Continuously Violated Requirements and Traffic Jam are detected, the rest
// not detected, skipped or not evaluated (no CPU or lock data).
std::string write_diagnosed_run(const std::string& root) {
  dt::ExperimentSpec load;
  load.id = "load-u50";
  load.users = 50;
  load.requests = 600;
  load.services = {"GET /product", "GET /<b>\"quoted\"</b>"};
  load.response_ms = [](int, const std::string& s) { return s == "GET /product" ? 2000.0 : 50.0; };
  dt::write_experiment(root, load);
  const double rt[] = {100, 300, 700, 1200, 2000};
  for (int k = 0; k < 5; ++k) {
    dt::ExperimentSpec s = dt::scaling_step(k, {"response_time"});
    s.response_ms = [v = rt[k]](int, const std::string&) { return v; };
    s.noise_ms = rt[k] * 0.05;
    dt::write_experiment(root, s, 100 + static_cast<uint64_t>(k));
  }
  const diagnose::ExperimentData data = diagnose::load_experiment_data(root);
  const diagnose::NodeResult result = diagnose::run_diagnosis(
      data, diagnose::parse_diagnose_config(diagnose::default_config_json()));
  const std::string out = root + "/report";
  diagnose::write_report(result, diagnose::report_meta(data), out);
  return out;
}

json read_report_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// The served report minus what the server adds for display.
json without_view(json node) {
  for (const char* key : {"description", "look_at", "plots"}) node.erase(key);
  for (json& e : node["evidence"]) {
    e.erase("certainty");
    e.erase("supports_finding");
  }
  for (json& c : node["children"]) c = without_view(c);
  return node;
}

const json* find_node(const json& node, const std::string& id) {
  if (node["id"] == id) return &node;
  for (const json& c : node["children"])
    if (const json* found = find_node(c, id)) return found;
  return nullptr;
}

void find_nodes(const json& node, const std::string& status, std::vector<json>* out) {
  if (node["status"] == status) out->push_back(node);
  for (const json& c : node["children"]) find_nodes(c, status, out);
}

class ServeDiagnosisTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new dt::TempDir();
    report_dir_ = new std::string(write_diagnosed_run(dir_->path()));
    store_ = new store::MemoryStore(bookstore_log());
  }
  static void TearDownTestSuite() {
    delete store_;
    delete report_dir_;
    delete dir_;
  }
  // The load error for the real report changed by `edit`, written as a file.
  static std::string error_after(const std::function<void(json&)>& edit) {
    json doc = read_report_json(*report_dir_ + "/report.json");
    edit(doc);
    const std::string file = dir_->path() + "/edited.json";
    std::ofstream(file) << doc.dump(1);
    auto loaded = load_diagnosis_report(file);
    if (!std::holds_alternative<std::string>(loaded)) return "(accepted)";
    const std::string error = std::get<std::string>(loaded);
    EXPECT_EQ(error.rfind(file + ": ", 0), 0u) << "the error names the file: " << error;
    return error.substr(file.size() + 2);
  }
  static dt::TempDir* dir_;
  static std::string* report_dir_;
  static store::MemoryStore* store_;
};
dt::TempDir* ServeDiagnosisTest::dir_ = nullptr;
std::string* ServeDiagnosisTest::report_dir_ = nullptr;
store::MemoryStore* ServeDiagnosisTest::store_ = nullptr;

TEST_F(ServeDiagnosisTest, ServesTheReportAsWrittenPlusItsView) {
  const json written = read_report_json(*report_dir_ + "/report.json");
  // The directory and the file itself both name the report.
  for (const std::string& path : {*report_dir_, *report_dir_ + "/report.json"}) {
    auto loaded = load_diagnosis_report(path);
    ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const DiagnosisReport>>(loaded))
        << std::get<std::string>(loaded);
    ServeOptions o;
    o.port = 0;
    o.diagnosis = std::get<std::shared_ptr<const DiagnosisReport>>(loaded);
    EXPECT_EQ(o.diagnosis->file, *report_dir_ + "/report.json");
    RunningServer server(*store_, o);
    const HttpReply r = http_get(server.port(), "/api/diagnosis");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.header("content-type"), "application/json");
    json served = json::parse(r.body);
    ASSERT_TRUE(served["root"].contains("description"));
    EXPECT_FALSE(served["root"]["description"].get<std::string>().empty());
    served["root"] = without_view(served["root"]);
    EXPECT_EQ(served, written);
    const HttpReply extra = http_get(server.port(), "/api/diagnosis?node=root");
    EXPECT_EQ(extra.status, 400);
    EXPECT_EQ(json::parse(extra.body)["parameter"], "node");
  }
  // The planted problems are what the report says was found.
  std::vector<json> detected;
  find_nodes(written["root"], "detected", &detected);
  std::set<std::string> ids;
  for (const json& n : detected) ids.insert(n["id"].get<std::string>());
  EXPECT_TRUE(ids.contains("performance_problem"));
  EXPECT_TRUE(ids.contains("traffic_jam"));
  EXPECT_EQ(written["counts"]["detected"].get<size_t>(), detected.size());
}

// Names of operations and lock sites are served as report.html shows them;
// the file keeps what the probes recorded.
TEST_F(ServeDiagnosisTest, ServesStandardTypesAsTheCodeSpellsThem) {
  const std::string site =
      "shop.Shop.cross_bridge(std.__cxx11.basic_string<char| std.char_traits<char>| "
      "std.allocator<char> > const&)";
  json doc = read_report_json(*report_dir_ + "/report.json");
  doc["root"]["reason"] = "most: " + site;
  doc["root"]["evidence"][0]["location"] = site;
  doc["root"]["charts"]["growth"] = json::array({{{"key", site}, {"points", json::array()}}});
  doc["warnings"] = json::array({"Other processes on this machine used up to 48% of its CPUs"});
  const std::string file = dir_->path() + "/long-names.json";
  std::ofstream(file) << doc.dump(1);
  auto loaded = load_diagnosis_report(file);
  ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const DiagnosisReport>>(loaded))
      << std::get<std::string>(loaded);
  const json served = json::parse(std::get<std::shared_ptr<const DiagnosisReport>>(loaded)->body);
  const std::string readable = "shop.Shop.cross_bridge(std.string const&)";
  EXPECT_EQ(served["root"]["reason"], "most: " + readable);
  EXPECT_EQ(served["root"]["evidence"][0]["location"], readable);
  EXPECT_EQ(served["root"]["charts"]["growth"][0]["key"], site);  // the data as written
  bool growth_plotted = false;
  for (const json& plot : served["root"]["plots"]) {
    if (plot["kind"] != "growth") continue;
    growth_plotted = true;
    EXPECT_EQ(plot["series"][0]["name"], readable);
  }
  EXPECT_TRUE(growth_plotted) << served["root"]["plots"].dump(1);
  EXPECT_EQ(served["warnings"], doc["warnings"]);
}

// The server computes the plots from the charts of whatever report.json it
// is given, and the report checker does not look inside `charts`: charts
// of any shape are drawn from what is readable (missing numbers become
// null), never a crash.
TEST_F(ServeDiagnosisTest, ChartsOfAnyShapeAreServedWithoutACrash) {
  json doc = read_report_json(*report_dir_ + "/report.json");
  doc["root"]["charts"] = {
      {"cdf", json::array({json::object(), {{"points", 5}, {"service", 7}}, 3})},
      {"ramp", json::array({{{"windows", json::array({json::array({1}), "x", nullptr})}}})},
      {"hiccup_timeline", json::array({{{"buckets", json::array({"no", json::array()})}}})},
      {"growth", json::array({{{"key", json::array()}, {"found", "no"}, {"points", 1}}})},
      {"database_cpu", json::array({json::object(), 4})},
      {"message_throughput", json::array({json::array({1, 2}), json::array({"a"})})},
      {"time_split", json::array({{{"found", true}}, {{"found", 1}}})},
      {"database_call_share",
       json::array({{{"service", 3},
                     {"points", json::array({{{"users", 2}, {"share", 0.5}}, "x"})},
                     {"found", true}}})},
      {"scaling", "not a list"}};
  const std::string file = dir_->path() + "/odd-charts.json";
  std::ofstream(file) << doc.dump(1);
  auto loaded = load_diagnosis_report(file);
  ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const DiagnosisReport>>(loaded))
      << std::get<std::string>(loaded);
  const json served = json::parse(std::get<std::shared_ptr<const DiagnosisReport>>(loaded)->body);
  std::multiset<std::string> kinds;
  for (const json& plot : served["root"]["plots"]) kinds.insert(plot["kind"].get<std::string>());
  // Three CDFs (an entry of any shape is a chart with no points), one ramp,
  // one timeline (its first bucket is not a list: no start time), one
  // growth chart, database CPU, message throughput, the split marked found.
  EXPECT_EQ(kinds.count("cdf"), 3u);
  EXPECT_EQ(kinds.count("ramp"), 1u);
  EXPECT_EQ(kinds.count("hiccup_timeline"), 1u);
  EXPECT_EQ(kinds.count("growth"), 1u);
  EXPECT_EQ(kinds.count("database_cpu"), 1u);
  EXPECT_EQ(kinds.count("message_throughput"), 1u);
  EXPECT_EQ(kinds.count("time_split"), 1u);
  EXPECT_EQ(kinds.count("database_call_share"), 1u);
  EXPECT_EQ(kinds.count("scaling"), 0u);
  for (const json& plot : served["root"]["plots"]) {
    if (plot["kind"] == "database_call_share") {
      // A share in per cent; a point that is not an object reads as null.
      EXPECT_EQ(plot["series"][0]["x"], json::array({2, nullptr})) << plot.dump();
      EXPECT_EQ(plot["series"][0]["y"], json::array({50.0, nullptr})) << plot.dump();
    }
    if (plot["kind"] != "message_throughput") continue;
    EXPECT_EQ(plot["series"][0]["x"], json::array({1, nullptr})) << plot.dump();
    EXPECT_EQ(plot["series"][0]["y"], json::array({2, nullptr})) << plot.dump();
  }
}

// The web UI draws what report.html shows: the served view is computed by
// the code report.html is drawn with, so every chart title, every
// certainty in words and every place to look at is in report.html too.
TEST_F(ServeDiagnosisTest, TheServedViewIsWhatReportHtmlShows) {
  auto loaded = load_diagnosis_report(*report_dir_);
  ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const DiagnosisReport>>(loaded));
  const json served = json::parse(std::get<std::shared_ptr<const DiagnosisReport>>(loaded)->body);
  std::ifstream in(*report_dir_ + "/report.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(html.empty());
  // The planted scaling series: Traffic Jam's chart of GET /product.
  const json* jam = find_node(served["root"], "traffic_jam");
  ASSERT_NE(jam, nullptr);
  bool scaling = false;
  for (const json& plot : (*jam)["plots"]) {
    if (plot["kind"] != "scaling" || plot["title"] != "Response time vs users: GET /product")
      continue;
    scaling = true;
    EXPECT_EQ(plot["x_label"], "users");
    ASSERT_EQ(plot["series"].size(), 2u);
    EXPECT_EQ(plot["series"][0]["x"], json::array({1, 13, 25, 37, 50})) << plot.dump();
    EXPECT_EQ(plot["series"][0]["low"].size(), 5u);  // error bars
    EXPECT_TRUE(plot["series"][1]["dashed"].get<bool>());
    EXPECT_EQ(plot["hlines"][0]["label"], "requirement");
  }
  EXPECT_TRUE(scaling) << (*jam)["plots"].dump(1);
  size_t titles = 0, certainties = 0, places = 0;
  const std::function<void(const json&)> visit = [&](const json& node) {
    for (const json& plot : node["plots"]) {
      ++titles;
      EXPECT_NE(html.find(analysis::xml_escape(plot["title"].get<std::string>())),
                std::string::npos)
          << plot["title"];
    }
    for (const json& e : node["evidence"]) {
      ++certainties;
      EXPECT_NE(
          html.find("<td>" + analysis::xml_escape(e["certainty"].get<std::string>()) + "</td>"),
          std::string::npos)
          << e["certainty"];
    }
    if (node["status"] == "detected") {
      for (const json& place : node["look_at"]) {
        ++places;
        EXPECT_NE(html.find("<code>" + analysis::xml_escape(place.get<std::string>()) + "</code>"),
                  std::string::npos)
            << place;
      }
    }
    for (const json& c : node["children"]) visit(c);
  };
  visit(served["root"]);
  EXPECT_GT(titles, 3u);
  EXPECT_GT(certainties, 3u);
  EXPECT_GT(places, 0u);
}

TEST_F(ServeDiagnosisTest, NoReportAnswers404WithAJsonError) {
  ServeOptions o;
  o.port = 0;
  RunningServer server(*store_, o);
  const HttpReply r = http_get(server.port(), "/api/diagnosis");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(json::parse(r.body)["error"].get<std::string>().find("--diagnosis"), std::string::npos);
  // A report found beside the log but unusable: the 404 says why.
  o.diagnosis_problem = "the diagnosis report is not usable: X: format: wrong";
  RunningServer with_problem(*store_, o);
  const HttpReply p = http_get(with_problem.port(), "/api/diagnosis");
  EXPECT_EQ(p.status, 404);
  EXPECT_EQ(json::parse(p.body)["error"], o.diagnosis_problem);
}

TEST_F(ServeDiagnosisTest, EveryBrokenReportIsRefusedNamingTheKey) {
  EXPECT_EQ(error_after([](json&) {}), "(accepted)");
  EXPECT_EQ(error_after([](json& d) { d["format"] = "sonde-diagnosis/2"; }),
            "format: needs 'sonde-diagnosis/1', got 'sonde-diagnosis/2'");
  EXPECT_EQ(error_after([](json& d) { d.erase("format"); }), "format: missing");
  EXPECT_EQ(error_after([](json& d) { d.erase("root"); }), "root: missing");
  EXPECT_EQ(error_after([](json& d) { d["counts"].erase("skipped"); }), "counts.skipped: missing");
  EXPECT_EQ(error_after([](json& d) { d["complete"] = "yes"; }),
            "complete: needs true or false, got a string");
  EXPECT_EQ(error_after([](json& d) { d["root"].erase("status"); }), "root.status: missing");
  EXPECT_EQ(error_after([](json& d) { d["root"]["children"][1]["status"] = "maybe"; }),
            "root.children[1].status: needs detected, not_detected, skipped or not_evaluated, "
            "got 'maybe'");
  EXPECT_EQ(error_after([](json& d) { d["root"]["evidence"][0]["p_value"] = "small"; }),
            "root.evidence[0].p_value: needs a number or null, got a string");
  EXPECT_EQ(error_after([](json& d) { d["root"]["evidence"][0].erase("location"); }),
            "root.evidence[0].location: missing");
  EXPECT_EQ(error_after([](json& d) { d["root"]["charts"] = json::array(); }),
            "root.charts: needs an object, got an array");
  EXPECT_EQ(error_after([](json& d) { d["root"]["children"] = 3; }),
            "root.children: needs an array, got a number");
  EXPECT_EQ(error_after([](json& d) { d["warnings"] = "busy"; }),
            "warnings: needs an array, got a string");
  EXPECT_EQ(error_after([](json& d) {
              d["warnings"] = json::array({"busy", 1});
            }),
            "warnings[1]: needs a string, got a number");
  EXPECT_EQ(error_after([](json& d) { d.erase("warnings"); }), "(accepted)");  // older reports
  EXPECT_EQ(error_after([](json& d) { d = json::array({d}); }),
            "the report needs to be a JSON object, got an array");
  const uint64_t detected = read_report_json(*report_dir_ + "/report.json")["counts"]["detected"];
  EXPECT_EQ(error_after(
                [](json& d) { d["counts"]["detected"] = d["counts"]["detected"].get<int>() + 1; }),
            "counts.detected: says " + std::to_string(detected + 1) + ", the tree has " +
                std::to_string(detected) + " such nodes");
}

TEST_F(ServeDiagnosisTest, SyntaxErrorsAndMissingFilesAreNamed) {
  std::ifstream in(*report_dir_ + "/report.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = dir_->path() + "/cut.json";
  std::ofstream(cut) << text.substr(0, text.size() / 2);
  auto loaded = load_diagnosis_report(cut);
  ASSERT_TRUE(std::holds_alternative<std::string>(loaded));
  const std::string error = std::get<std::string>(loaded);
  EXPECT_EQ(error.rfind(cut + ": not valid JSON: ", 0), 0u) << error;
  EXPECT_NE(error.find("line "), std::string::npos) << "names the place: " << error;
  const std::string missing = dir_->path() + "/nowhere";
  loaded = load_diagnosis_report(missing);
  ASSERT_TRUE(std::holds_alternative<std::string>(loaded));
  EXPECT_EQ(std::get<std::string>(loaded).rfind(missing + ": no such file", 0), 0u)
      << std::get<std::string>(loaded);
}

// The command refuses a broken --diagnosis before serving anything.
TEST_F(ServeDiagnosisTest, CommandExitsOneOnABrokenReport) {
  const std::string bad = dir_->path() + "/bad.json";
  std::ofstream(bad) << R"({"format": "something-else"})";
  const std::string err = dir_->path() + "/serve.err";
  // `timeout`: a server that wrongly starts would otherwise never return.
  const std::string cmd = "timeout 30 " + std::string(SONDE_BINARY_DIR) + "/src/cli/sonde serve " +
                          bookstore_log() + " --listen 127.0.0.1:0 --diagnosis " + bad + " 2> " +
                          err;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream in(err);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(bad + ": format: needs 'sonde-diagnosis/1'"), std::string::npos) << text;
}

}  // namespace
}  // namespace sonde::serve::test
