// `sonde context LOG`: calling-context timing models (seed 000). Splits each
// operation's executions by caller, stack and trace context, reports per
// level how many contexts there are and how much of the response-time
// spread they explain, builds the calling-context tree, shrinks it with the
// three operators and prints the model. See docs/analysis/context.md.
//
// Exit status: 0 ok; 1 the log or the baseline cannot be read or an output
// file cannot be written (the message names the file); 2 usage error; 3 with
// --fail-on-regression, a context got slower than in the baseline.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analysis/context/context_anomaly.hpp"
#include "analysis/context/context_baseline.hpp"
#include "analysis/context/context_levels.hpp"
#include "analysis/context/context_log.hpp"
#include "analysis/context/context_regression.hpp"
#include "analysis/context/context_study.hpp"
#include "analysis/context/context_tree.hpp"
#include "analysis/context/context_tree_dot.hpp"
#include "analysis/render/graphviz_render.hpp"
#include "analysis/text/duration_format.hpp"
#include "analysis/text/text_table.hpp"
#include "cli/command.hpp"
#include "cli/context_regression_output.hpp"
#include "cli/output_file.hpp"
#include "stats/percentile.hpp"

namespace sonde::cli {
namespace {

constexpr int kRegression = 3;

using analysis::ContextLevel;
using analysis::kContextLevels;

struct ContextOptions {
  std::string log;
  bool json = false;
  std::string operation;
  std::string tree_json, dot, svg;
  std::string min_observations = "30";
  std::string similarity = "0.5";
  std::string max_leaves = "0";
  std::string anomalies = "0";
  std::string study = "0";  // random instrumentations per number of monitoring points
  std::string study_csv, study_svg;
  std::string seed = "1";
  std::string save_model, baseline;
  std::string alpha = "0.01", min_change = "10";
  bool fail_on_regression = false;
};

// Reads a model saved with --save-model; "" on success, else the reason.
std::string load_baseline(const std::string& path, analysis::ContextBaseline* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open it";
  try {
    *out = analysis::baseline_from_json(nlohmann::json::parse(in));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string percent(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", p);
  return buf;
}

nlohmann::json model_json(const analysis::ContextModelSummary& m) {
  return {{"level", "model"},
          {"contexts", m.entities},
          {"leaves", m.leaves},
          {"linked_leaves", m.linked_leaves},
          {"leaves_per_level",
           {{"operation", m.leaves_per_level[0]},
            {"caller", m.leaves_per_level[1]},
            {"stack", m.leaves_per_level[2]},
            {"trace", m.leaves_per_level[3]}}},
          {"observations_per_context",
           m.entities ? static_cast<double>(m.observations) / static_cast<double>(m.entities) : 0},
          {"weighted_sd_ns", m.weighted_sd},
          {"sd_reduction_percent", m.reduction_percent},
          {"bimodal_percent", m.bimodal_percent}};
}

void add_level_rows(analysis::TextTable& table, const std::array<analysis::LevelStats, 4>& levels,
                    const analysis::ContextModelSummary& model) {
  for (int l = 0; l < kContextLevels; ++l) {
    const analysis::LevelStats& s = levels[static_cast<size_t>(l)];
    char per[32];
    std::snprintf(per, sizeof per, "%.1f", s.mean_observations());
    table.add_row({to_string(static_cast<ContextLevel>(l)), std::to_string(s.contexts), per,
                   analysis::format_duration(s.weighted_sd), percent(s.reduction_percent),
                   percent(s.bimodal_percent)});
  }
  char per[32];
  std::snprintf(per, sizeof per, "%.1f",
                model.entities
                    ? static_cast<double>(model.observations) / static_cast<double>(model.entities)
                    : 0.0);
  table.add_row({"model", std::to_string(model.entities), per,
                 analysis::format_duration(model.weighted_sd), percent(model.reduction_percent),
                 percent(model.bimodal_percent)});
}

// Per number of monitoring points, the median over the runs of one column.
template <typename Value>
std::vector<double> study_medians(const std::vector<analysis::StudyRow>& rows, Value value) {
  std::vector<double> out;
  for (size_t i = 0; i < rows.size();) {
    std::vector<double> v;
    const size_t k = rows[i].monitoring_points;
    for (; i < rows.size() && rows[i].monitoring_points == k; ++i) v.push_back(value(rows[i]));
    out.push_back(stats::percentile(v, 0.5));
  }
  return out;
}

template <typename Content>
bool write_file(const std::string& path, const Content& content) {
  if (const std::string error = write_output_file(path, content); !error.empty()) {
    std::cerr << "sonde context: " << error << "\n";
    return false;
  }
  return true;
}

int run_context(const ContextOptions& o) {
  if (o.log.empty()) {
    std::cerr << "sonde context: missing the LOG argument (a .sonde file or a log directory)\n";
    return kUsage;
  }
  analysis::ContextTreeOptions tree_options;
  size_t anomaly_top = 0, study_runs = 0;
  uint64_t seed = 1;
  if (!parse_number(o.min_observations, &tree_options.min_observations) ||
      !parse_number(o.similarity, &tree_options.similarity) || tree_options.similarity < 0 ||
      !parse_number(o.max_leaves, &tree_options.max_leaves) ||
      !parse_number(o.anomalies, &anomaly_top) || !parse_number(o.study, &study_runs) ||
      !parse_number(o.seed, &seed)) {
    std::cerr << "sonde context: --min-observations, --max-leaves, --anomalies, --study and "
                 "--seed need whole numbers, --similarity a non-negative number\n";
    return kUsage;
  }
  analysis::RegressionOptions regression_options;
  if (!parse_number(o.alpha, &regression_options.alpha) || regression_options.alpha <= 0 ||
      regression_options.alpha >= 1 ||
      !parse_number(o.min_change, &regression_options.min_change_percent) ||
      regression_options.min_change_percent < 0) {
    std::cerr << "sonde context: --alpha needs a number in (0, 1), --min-change a non-negative "
                 "percentage\n";
    return kUsage;
  }
  if (o.fail_on_regression && o.baseline.empty()) {
    std::cerr << "sonde context: --fail-on-regression needs --baseline MODEL\n";
    return kUsage;
  }
  if (study_runs == 0 && (!o.study_csv.empty() || !o.study_svg.empty())) {
    std::cerr << "sonde context: --study-csv and --study-svg need --study N\n";
    return kUsage;
  }
  std::error_code fs_error;
  if (!std::filesystem::exists(o.log, fs_error)) {
    std::cerr << "sonde context: cannot read '" << o.log << "': no such file or directory\n";
    return kUnreadable;
  }
  std::optional<analysis::ContextBaseline> baseline;
  if (!o.baseline.empty()) {
    baseline.emplace();
    if (const std::string why = load_baseline(o.baseline, &*baseline); !why.empty()) {
      std::cerr << "sonde context: cannot use baseline '" << o.baseline << "': " << why << "\n";
      return kUnreadable;
    }
  }
  const analysis::ContextLog log = analysis::read_context_log(o.log);
  for (const std::string& e : log.read.errors) std::cerr << "sonde context: error: " << e << "\n";
  if (!log.read.ok && log.read.records == 0) {
    if (log.read.errors.empty()) std::cerr << "sonde context: cannot read '" << o.log << "'\n";
    return kUnreadable;
  }
  const analysis::ContextData& data = log.data;
  uint32_t selected = analysis::kNoContext;
  if (!o.operation.empty()) {
    for (uint32_t i = 0; i < data.operations.size(); ++i)
      if (data.operations[i] == o.operation) selected = i;
    if (selected == analysis::kNoContext) {
      std::cerr << "sonde context: no operation '" << o.operation << "' in '" << o.log << "'\n";
      return kUsage;
    }
  }

  const analysis::ContextIndex index(data);
  const analysis::ContextLevelReport levels = analysis::summarize_levels(data, index);
  analysis::ContextTree tree(data, index);
  const analysis::ContextOperatorCounts counts = tree.apply_operators(tree_options);
  const analysis::ContextModelSummary model = tree.summarize();

  if (!o.tree_json.empty() &&
      !write_file(o.tree_json, analysis::context_tree_json(data, tree).dump(2) + "\n")) {
    return kUnreadable;
  }
  if (!o.dot.empty() || !o.svg.empty()) {
    const std::string dot = analysis::context_tree_dot(data, tree);
    if (!o.dot.empty() && !write_file(o.dot, dot)) return kUnreadable;
    if (!o.svg.empty()) {
      const analysis::RenderResult svg = analysis::render_dot(dot);
      if (!svg.ok) {
        std::cerr << "sonde context: cannot render '" << o.svg << "': " << svg.error << "\n";
        return kUnreadable;
      }
      if (!write_file(o.svg, svg.output)) return kUnreadable;
    }
  }

  if (!o.save_model.empty()) {
    const analysis::ContextBaseline saved =
        analysis::make_baseline(data, index, tree, tree_options, o.log);
    if (!write_file(o.save_model,
                    [&saved](std::ostream& out) { analysis::write_baseline(out, saved); })) {
      return kUnreadable;
    }
  }
  std::optional<analysis::RegressionReport> regression;
  if (baseline) regression = analysis::compare_with_baseline(*baseline, data, regression_options);
  // The exit status once the report is out: the log's problems first.
  const int status = !log.read.ok                                                     ? kUnreadable
                     : o.fail_on_regression && regression && regression->slower() > 0 ? kRegression
                                                                                      : kOk;

  std::optional<analysis::AnomalyReport> anomalies;
  if (anomaly_top > 0) anomalies = analysis::detect_anomalies(data, tree, 3, anomaly_top);

  // The study: runs × operations random partial instrumentations.
  std::vector<analysis::StudyRow> study;
  if (study_runs > 0) {
    study = analysis::run_study(data, study_runs, seed);
    if (!o.study_csv.empty() && !write_file(o.study_csv, analysis::study_csv(study))) {
      return kUnreadable;
    }
    const std::string title = "sonde context " + o.log + ": " + std::to_string(study.size()) +
                              " random instrumentations, seed " + std::to_string(seed);
    if (!o.study_svg.empty() && !write_file(o.study_svg, analysis::study_svg(study, title))) {
      return kUnreadable;
    }
  }
  auto study_column = [&study](bool contexts, size_t level) {
    return study_medians(study, [contexts, level](const analysis::StudyRow& r) {
      return contexts ? static_cast<double>(r.result.contexts[level])
                      : r.result.reduction_percent[level];
    });
  };
  auto study_points = [&study] {
    return study_medians(study, [](const analysis::StudyRow& r) {
      return static_cast<double>(r.monitoring_points);
    });
  };

  static const char* kLevelNames[] = {"operation", "caller", "stack", "trace"};
  if (o.json) {
    using nlohmann::json;
    json level_list = json::array();
    for (int l = 0; l < kContextLevels; ++l)
      level_list.push_back(
          analysis::context_level_json(kLevelNames[l], levels.levels[static_cast<size_t>(l)]));
    level_list.push_back(model_json(model));
    json ops = json::array();
    for (const analysis::OperationContextStats& s : levels.operations) {
      if (selected != analysis::kNoContext && s.op != selected) continue;
      json per_level = json::array();
      for (int l = 0; l < kContextLevels; ++l)
        per_level.push_back(
            analysis::context_level_json(kLevelNames[l], s.levels[static_cast<size_t>(l)]));
      per_level.push_back(model_json(tree.summarize(s.op)));
      ops.push_back({{"operation", data.operations[s.op]},
                     {"executions", s.levels[0].observations},
                     {"bimodality", s.bimodality},
                     {"levels", per_level}});
    }
    json doc = {
        {"log", {{"path", o.log}, {"records", log.read.records}, {"errors", log.read.errors}}},
        {"traces",
         {{"used", data.traces}, {"skipped", data.skipped_traces}, {"shapes", data.shapes.size()}}},
        {"executions", data.observations.size()},
        {"sd_weighting", "execution-weighted population sd: sum_c (n_c/N) sd_c"},
        {"levels", level_list},
        {"model",
         {{"min_observations", tree_options.min_observations},
          {"similarity", tree_options.similarity},
          {"max_leaves", tree_options.max_leaves},
          {"removed", counts.removed},
          {"linked", counts.linked},
          {"merged", counts.merged},
          {"rounds", counts.rounds}}},
        {"operations", ops}};
    if (anomalies) {
      json top = json::array();
      for (const analysis::ScoredExecution& e : anomalies->top) {
        const analysis::ContextObservation& ob = data.observations[e.observation];
        top.push_back({{"operation", data.operations[ob.op]},
                       {"trace_id", ob.trace_id},
                       {"eoi", ob.eoi},
                       {"duration_ns", ob.duration},
                       {"score", e.score},
                       {"operation_score", e.operation_score}});
      }
      json traces = json::array();
      for (const analysis::TraceAnomaly& t : anomalies->traces) {
        traces.push_back(
            {{"trace_id", t.trace_id}, {"alarms", t.alarms}, {"max_score", t.max_score}});
      }
      doc["anomalies"] = {{"threshold", anomalies->threshold},
                          {"context_alarms", anomalies->context_alarms},
                          {"operation_alarms", anomalies->operation_alarms},
                          {"both", anomalies->both},
                          {"executions", top},
                          {"traces", traces}};
    }
    if (!study.empty()) {
      json medians = {{"monitoring_points", study_points()}};
      for (size_t l = 1; l < kContextLevels; ++l) {
        medians[std::string(kLevelNames[l]) + "_contexts"] = study_column(true, l);
        medians[std::string(kLevelNames[l]) + "_reduction_percent"] = study_column(false, l);
      }
      doc["study"] = {{"runs_per_monitoring_points", study_runs},
                      {"seed", seed},
                      {"instrumentations", study.size()},
                      {"medians", medians}};
    }
    if (selected != analysis::kNoContext) {
      doc["tree"] = analysis::context_tree_json(data, tree);
    }
    if (regression) doc["regression"] = regression_json(*baseline, *regression);
    std::cout << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return status;
  }

  std::cout << "Calling contexts of " << o.log << ": " << data.observations.size()
            << " executions in " << data.traces << " traces (" << data.shapes.size()
            << " distinct call trees), " << data.operations.size() << " operations";
  if (data.skipped_traces > 0) std::cout << ", " << data.skipped_traces << " traces skipped";
  std::cout << "\n\nσ = population standard deviation, weighted by executions; reduction "
               "against no context.\n\n";
  analysis::TextTable table(
      {"level", "contexts", "obs/context", "weighted σ", "σ reduction", "in bimodal contexts"});
  add_level_rows(table, levels.levels, model);
  table.write(std::cout);
  std::cout << "\nModel: min " << tree_options.min_observations << " observations, similarity "
            << tree_options.similarity << ", max leaves "
            << (tree_options.max_leaves ? std::to_string(tree_options.max_leaves) : "unlimited")
            << "; operators removed " << counts.removed << ", linked " << counts.linked
            << ", merged " << counts.merged << "\n";

  std::cout << "\nPer operation (σ reduction by caller / stack / trace / model):\n";
  analysis::TextTable per_op({"executions", "σ", "caller", "stack", "trace", "model", "leaves",
                              "bimodality", "operation"});
  for (const analysis::OperationContextStats& s : levels.operations) {
    if (selected != analysis::kNoContext && s.op != selected) continue;
    const analysis::ContextModelSummary m = tree.summarize(s.op);
    char bc[16];
    std::snprintf(bc, sizeof bc, "%.2f", s.bimodality);
    per_op.add_row({std::to_string(s.levels[0].observations),
                    analysis::format_duration(s.levels[0].weighted_sd),
                    percent(s.levels[1].reduction_percent), percent(s.levels[2].reduction_percent),
                    percent(s.levels[3].reduction_percent), percent(m.reduction_percent),
                    std::to_string(m.leaves), bc, data.operations[s.op]});
  }
  per_op.write(std::cout);

  if (selected != analysis::kNoContext) {
    std::cout << "\nModel contexts of " << data.operations[selected] << ":\n";
    analysis::TextTable leaves({"level", "n", "median", "IQR", "σ", "context"});
    for (int32_t leaf : tree.leaves()) {
      if (tree.operation_of(leaf) != selected) continue;
      const analysis::ContextNode& n = tree.nodes()[static_cast<size_t>(leaf)];
      const analysis::ContextNode& e = tree.nodes()[static_cast<size_t>(tree.entity(leaf))];
      std::string label = analysis::context_tree_label(data, n);
      if (n.linked_to >= 0) label += "  [linked to: " + analysis::context_tree_label(data, e) + "]";
      leaves.add_row(
          {kLevelNames[n.level], std::to_string(n.n), analysis::format_duration(e.quartiles.median),
           analysis::format_duration(e.quartiles.iqr()), analysis::format_duration(e.sd), label});
    }
    leaves.write(std::cout);
  }
  if (!study.empty()) {
    std::cout << "\nPartial-instrumentation study: " << study.size() << " random instrumentations ("
              << study_runs << " per number of monitoring points, seed " << seed << "); medians:\n";
    analysis::TextTable t(
        {"points", "caller", "stack", "trace", "caller σ red.", "stack σ red.", "trace σ red."});
    const std::vector<double> points = study_points();
    std::array<std::vector<double>, 6> cols;
    for (size_t l = 1; l < kContextLevels; ++l) {
      cols[l - 1] = study_column(true, l);
      cols[l + 2] = study_column(false, l);
    }
    for (size_t i = 0; i < points.size(); ++i) {
      std::vector<std::string> row = {std::to_string(static_cast<size_t>(points[i]))};
      for (size_t c = 0; c < 3; ++c) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f", cols[c][i]);
        row.push_back(buf);
      }
      for (size_t c = 3; c < 6; ++c) row.push_back(percent(cols[c][i]));
      t.add_row(row);
    }
    t.write(std::cout);
  }
  if (anomalies) {
    std::cout << "\nAnomalies (score = (x - Q3) / max(IQR, 5 % of median) > "
              << anomalies->threshold << "): " << anomalies->context_alarms
              << " against the context model, " << anomalies->operation_alarms
              << " against whole operations (" << anomalies->both << " in both)\n";
    analysis::TextTable top({"score", "op score", "duration", "trace", "eoi", "operation"});
    for (const analysis::ScoredExecution& e : anomalies->top) {
      const analysis::ContextObservation& ob = data.observations[e.observation];
      char a[32], b[32];
      std::snprintf(a, sizeof a, "%.1f", e.score);
      std::snprintf(b, sizeof b, "%.1f", e.operation_score);
      top.add_row({a, b, analysis::format_duration(static_cast<double>(ob.duration)),
                   std::to_string(ob.trace_id), std::to_string(ob.eoi), data.operations[ob.op]});
    }
    top.write(std::cout);
  }
  if (regression) print_regression(std::cout, *baseline, *regression, 20);
  std::cout.flush();
  return status;
}

void setup_context(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ContextOptions>();
  app.add_option("log", o->log, "The log: a .sonde file or a directory (native or Kieker)")
      ->type_name("LOG");
  app.add_flag("--json", o->json, "Print the report as JSON");
  app.add_option("--operation", o->operation, "Drill down into one operation (full signature)")
      ->type_name("OP");
  app.add_option("--tree-json", o->tree_json, "Write the calling-context tree as JSON")
      ->type_name("FILE");
  app.add_option("--dot", o->dot, "Write the calling-context tree as Graphviz DOT")
      ->type_name("FILE");
  app.add_option("--svg", o->svg, "Render the calling-context tree to SVG (needs Graphviz dot)")
      ->type_name("FILE");
  app.add_option("--min-observations", o->min_observations,
                 "Contexts with fewer executions are linked to an ancestor (default 30)")
      ->type_name("N");
  app.add_option("--similarity", o->similarity,
                 "Merge sibling contexts whose median/IQR distance is at most this (default 0.5)")
      ->type_name("D");
  app.add_option("--max-leaves", o->max_leaves,
                 "Stop merging once the model has this many contexts (default 0: no limit)")
      ->type_name("K");
  app.add_option("--anomalies", o->anomalies,
                 "List the N most anomalous executions against their context (default 0: off)")
      ->type_name("N");
  app.add_option("--study", o->study,
                 "Partial-instrumentation study: N random instrumentations per number of "
                 "monitoring points (default 0: off)")
      ->type_name("N");
  app.add_option("--study-csv", o->study_csv, "Write every study instrumentation as CSV")
      ->type_name("FILE");
  app.add_option("--study-svg", o->study_svg,
                 "Plot contexts and σ reduction against monitoring points (SVG)")
      ->type_name("FILE");
  app.add_option("--seed", o->seed, "Seed of the study's random subsets (default 1)")
      ->type_name("S");
  app.add_option("--save-model", o->save_model,
                 "Save the model as a baseline for a later log (JSON, sonde-context-model/2)")
      ->type_name("FILE");
  app.add_option("--baseline", o->baseline,
                 "Compare this log with a model saved by --save-model: which contexts got slower")
      ->type_name("MODEL");
  app.add_option("--alpha", o->alpha,
                 "Significance level of the regression check, after Holm (default 0.01)")
      ->type_name("A");
  app.add_option("--min-change", o->min_change,
                 "Smallest median change in percent that counts as a change (default 10)")
      ->type_name("PERCENT");
  app.add_flag("--fail-on-regression", o->fail_on_regression,
               "Exit with status 3 when a context got slower than in the baseline");
  app.footer(
      "Exit status: 0 ok, 1 the log or baseline cannot be read or an output cannot be written, "
      "2 usage error, 3 a context got slower (with --fail-on-regression).");
  app.callback([o, &exit_code] { exit_code = run_context(*o); });
}

}  // namespace

SONDE_COMMAND("context", "Calling-context timing models: caller, stack and trace contexts",
              setup_context);

}  // namespace sonde::cli
