// `sonde trace-analysis LOG --out DIR [outputs...]`: the text and diagram
// outputs of Kieker's trace-analysis tool, under Kieker's file names
// (executionTraces.txt, messageTraces.txt, callTree-<id>.dot,
// *SequenceDiagram-<id>.pic, *DependencyGraph.dot, aggregated*CallTree.dot,
// trace*EquivClasses.txt). Options mirror Kieker's; its camel-case
// spellings (--plot-Deployment-Sequence-Diagrams, ...) are accepted too.
// docs/analysis/kieker-parity.md lists every difference from Kieker.
//
// Exit status: 0 ok; 1 the log cannot be read or an output not written;
// 2 usage error.
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/kieker/kieker_record_filter.hpp"
#include "analysis/kieker/kieker_trace_analysis.hpp"
#include "analysis/model/trace_start_order.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "analysis/render/graphviz_render.hpp"
#include "cli/command.hpp"
#include "format/log_reader.hpp"

namespace sonde::cli {
namespace {

namespace fs = std::filesystem;
using analysis::GraphRequest;

constexpr const char* kName = "sonde trace-analysis";

// A dependency-graph option: absent, or present with an optional decoration.
struct GraphFlag {
  CLI::Option* option = nullptr;
  std::vector<std::string> values;
};

struct TraceAnalysisArgs {
  std::string log;
  std::string out;
  std::vector<std::string> select_traces;
  std::vector<std::string> filter_traces;
  std::string prefix;
  std::string response_times;
  size_t reorder_window = 100'000;
  bool all = false;
  bool svg = false;
  bool repair = false;
  bool json = false;
  analysis::KiekerOutputOptions outputs;
  GraphFlag deployment_component, assembly_component, deployment_operation, assembly_operation;
  bool container_graph = false;
};

// Writes outputs into a directory; with `svg`, every .dot file is also
// rendered by Graphviz into a .svg beside it. The file appended to last
// stays open, so writing a text file trace by trace does not reopen it.
class DirectoryOutput : public analysis::OutputFiles {
 public:
  DirectoryOutput(fs::path dir, bool svg) : dir_(std::move(dir)), svg_(svg) {}

  bool write(const std::string& name, std::string_view content) override {
    if (name == appending_ && !close_appending()) return false;
    std::ofstream f(dir_ / name, std::ios::binary | std::ios::trunc);
    if (f) f.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (f) f.close();
    if (!f) return failed(name);
    ++written_;
    names_.insert(name);
    if (!svg_ || !name.ends_with(".dot")) return true;
    const std::string svg_name = name.substr(0, name.size() - 4) + ".svg";
    const analysis::RenderResult r = analysis::render_dot(content, "svg");
    if (!r.ok) {
      std::cerr << kName << ": cannot render '" << (dir_ / svg_name).string() << "': " << r.error
                << "\n";
      return false;
    }
    return write(svg_name, r.output);
  }

  bool append(const std::string& name, std::string_view content) override {
    if (name != appending_) {
      if (!close_appending()) return false;
      append_stream_.open(dir_ / name, std::ios::binary | std::ios::app);
      appending_ = name;
      names_.insert(name);
    }
    if (append_stream_)
      append_stream_.write(content.data(), static_cast<std::streamsize>(content.size()));
    return append_stream_ ? true : failed(name);
  }

  size_t written() const { return written_; }
  // Every file written or appended to, sorted.
  const std::set<std::string>& names() const { return names_; }

  // Closes the file being appended to; false (and a message) if that fails.
  bool close_appending() {
    if (appending_.empty()) return true;
    append_stream_.close();
    const std::string name = std::exchange(appending_, std::string());
    if (!append_stream_) {
      append_stream_.clear();
      return failed(name);
    }
    return true;
  }

 private:
  bool failed(const std::string& name) {
    std::cerr << kName << ": cannot write '" << (dir_ / name).string()
              << "': " << std::strerror(errno) << "\n";
    return false;
  }

  fs::path dir_;
  bool svg_;
  size_t written_ = 0;
  std::set<std::string> names_;
  std::string appending_;
  std::ofstream append_stream_;
};

bool parse_trace_ids(const std::vector<std::string>& texts, std::unordered_set<int64_t>* ids) {
  for (const std::string& t : texts) {
    int64_t id = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), id);
    if (ec != std::errc() || end != t.data() + t.size()) {
      std::cerr << kName << ": --select-traces and --filter-traces take trace ids (integers), got '"
                << t << "'\n";
      return false;
    }
    ids->insert(id);
  }
  return true;
}

// "none" or Kieker's "responseTimes-<unit>"; an absent value takes `fallback`.
bool parse_graph_flag(const GraphFlag& flag, const std::optional<analysis::TimeUnit>& fallback,
                      bool all, GraphRequest* out) {
  out->enabled = all || flag.option->count() > 0;
  out->response_times = fallback;
  // CLI11 stores "" for a flag given without a value.
  if (flag.values.empty() || flag.values.front().empty()) return true;
  const std::string& v = flag.values.front();
  analysis::TimeUnit unit{};
  if (v == "none") {
    out->response_times.reset();
  } else if (v.starts_with("responseTimes-") && analysis::parse_time_unit(v.substr(14), &unit)) {
    out->response_times = unit;
  } else {
    std::cerr << kName << ": " << flag.option->get_name()
              << " takes none or responseTimes-ns|us|ms|s, got '" << v
              << "' (give LOG before the options)\n";
    return false;
  }
  return true;
}

int run(TraceAnalysisArgs& a) {
  if (a.log.empty()) {
    std::cerr << kName << ": missing the LOG argument (a .sonde file or a log directory)\n";
    return kUsage;
  }
  if (a.out.empty()) {
    std::cerr << kName << ": missing --out DIR (the directory to write the outputs into)\n";
    return kUsage;
  }
  std::optional<analysis::TimeUnit> default_times;
  if (!a.response_times.empty()) {
    analysis::TimeUnit unit{};
    if (!analysis::parse_time_unit(a.response_times, &unit)) {
      std::cerr << kName << ": --response-times takes ns, us, ms or s, got '" << a.response_times
                << "'\n";
      return kUsage;
    }
    default_times = unit;
  }
  analysis::KiekerOutputOptions& o = a.outputs;
  if (!parse_graph_flag(a.deployment_component, default_times, a.all,
                        &o.deployment_component_graph) ||
      !parse_graph_flag(a.assembly_component, default_times, a.all, &o.assembly_component_graph) ||
      !parse_graph_flag(a.deployment_operation, default_times, a.all,
                        &o.deployment_operation_graph) ||
      !parse_graph_flag(a.assembly_operation, default_times, a.all, &o.assembly_operation_graph)) {
    return kUsage;
  }
  o.container_graph.enabled = a.container_graph || a.all;
  if (a.all) {
    for (bool* b : {&o.execution_traces, &o.message_traces, &o.invalid_traces, &o.system_model,
                    &o.deployment_sequence_diagrams, &o.assembly_sequence_diagrams, &o.call_trees,
                    &o.aggregated_deployment_call_tree, &o.aggregated_assembly_call_tree,
                    &o.deployment_equivalence_classes, &o.assembly_equivalence_classes}) {
      *b = true;
    }
  }
  const bool any = o.execution_traces || o.message_traces || o.invalid_traces || o.system_model ||
                   o.deployment_sequence_diagrams || o.assembly_sequence_diagrams || o.call_trees ||
                   o.aggregated_deployment_call_tree || o.aggregated_assembly_call_tree ||
                   o.deployment_equivalence_classes || o.assembly_equivalence_classes ||
                   o.container_graph.enabled || o.deployment_component_graph.enabled ||
                   o.assembly_component_graph.enabled || o.deployment_operation_graph.enabled ||
                   o.assembly_operation_graph.enabled;
  if (!any) {
    std::cerr << kName << ": nothing to write: choose outputs (see --help) or --all\n";
    return kUsage;
  }
  if (!a.select_traces.empty() && !a.filter_traces.empty()) {
    std::cerr << kName << ": --select-traces and --filter-traces exclude each other\n";
    return kUsage;
  }
  std::unordered_set<int64_t> listed;
  if (!parse_trace_ids(a.select_traces, &listed) || !parse_trace_ids(a.filter_traces, &listed)) {
    return kUsage;
  }
  const auto selection = a.filter_traces.empty() ? analysis::TraceIdSelection::kOnly
                                                 : analysis::TraceIdSelection::kExcept;
  o.sequence_diagram_svg = a.svg;
  o.prefix = a.prefix;
  if (a.prefix.find('/') != std::string::npos) {
    std::cerr << kName << ": --prefix must not contain '/', got '" << a.prefix << "'\n";
    return kUsage;
  }

  std::error_code ec;
  if (!fs::exists(a.log, ec)) {
    std::cerr << kName << ": cannot read '" << a.log << "': no such file or directory\n";
    return kFailed;
  }
  fs::create_directories(a.out, ec);
  if (ec || !fs::is_directory(a.out)) {
    std::cerr << kName << ": cannot create the output directory '" << a.out
              << "': " << (ec ? ec.message() : "not a directory") << "\n";
    return kFailed;
  }

  // Kieker's stages: trace-id filter and system model, reconstruction,
  // Kieker's trace order, outputs. The reconstructor is used directly rather
  // than through TraceAnalysis, whose statistics keep every duration.
  analysis::KiekerSystemModel model;
  DirectoryOutput files(a.out, a.svg);
  analysis::KiekerTraceAnalysis outputs(o, model, files);
  analysis::TraceStartOrder ordered(outputs, a.reorder_window);
  analysis::ReconstructionOptions reconstruction;
  reconstruction.repair_event_traces = a.repair;
  analysis::TraceReconstructor traces(ordered, reconstruction);
  analysis::KiekerRecordFilter filter(traces, model, listed, selection);
  // Kieker's outputs, so Kieker's names (docs/formats/operation-names.md).
  const format::LogReadStats read = format::read_log(a.log, filter, format::NameForm::kKieker);
  traces.finish();  // closes the traces still open
  ordered.flush();
  outputs.finish();
  const bool closed = files.close_appending();

  for (const std::string& e : read.errors) std::cerr << kName << ": error: " << e << "\n";
  if (!read.ok && read.records == 0) {
    if (read.errors.empty()) std::cerr << kName << ": cannot read '" << a.log << "'\n";
    return kFailed;
  }
  for (int64_t id : listed) {
    if (filter.seen().count(id) == 0) {
      std::cerr << kName << ": warning: trace " << id << " listed but not in '" << a.log << "'\n";
    }
  }
  if (ordered.late() > 0) {
    std::cerr << kName << ": warning: " << ordered.late()
              << " traces arrived too late to be put in Kieker's order; "
                 "raise --reorder-window\n";
  }
  if (a.json) {
    const nlohmann::json doc = {
        {"traces", outputs.traces()},    {"invalid_traces", outputs.invalid_traces()},
        {"late_traces", ordered.late()}, {"out", a.out},
        {"files", files.names()},        {"errors", read.errors},
        {"warnings", read.warnings}};
    std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "Traces: " << outputs.traces() << " valid, " << outputs.invalid_traces()
              << " invalid\n"
              << "Wrote " << files.written() << " files to " << a.out << "\n";
  }
  if (!outputs.failed_files().empty() || !closed) return kFailed;
  return read.ok ? kOk : kFailed;
}

void add_graph_option(CLI::App& app, const std::string& names, GraphFlag& flag,
                      const std::string& help) {
  flag.option =
      app.add_option(names, flag.values, help + " [DECORATION: none, responseTimes-<unit>]")
          ->expected(0, 1)
          ->type_name("[DECORATION]");
}

void setup_trace_analysis(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<TraceAnalysisArgs>();
  analysis::KiekerOutputOptions& o = a->outputs;
  // Validation happens in run() so that every usage error exits with 2.
  app.add_option("log,-i,--inputdirs", a->log,
                 "The log: a .sonde file or a directory (native or Kieker)")
      ->type_name("LOG");
  app.add_option("--out,-o,--outputdir", a->out, "Directory for the outputs (created if missing)")
      ->type_name("DIR");
  app.add_option("--select-traces", a->select_traces, "Only these trace ids")
      ->type_name("ID")
      ->expected(1, -1);
  app.add_option("--filter-traces", a->filter_traces, "All traces but these ids")
      ->type_name("ID")
      ->expected(1, -1);
  app.add_option("--prefix,-p,--output-filename-prefix", a->prefix,
                 "Put PREFIX in front of every file name")
      ->type_name("PREFIX");
  app.add_flag("--short-labels", a->outputs.short_labels, "Abbreviate package names ('..')");
  app.add_flag("--include-self-loops", o.include_self_loops,
               "Draw calls of a node to itself in dependency graphs");
  app.add_flag("--ignore-assumed-calls", o.trace.ignore_assumed_calls,
               "Do not mark calls of flow-event traces as assumed");
  app.add_flag("--repair,--repair-event-based-traces", a->repair,
               "Synthesise missing after events");
  app.add_flag("--all", a->all, "Write every output");
  app.add_flag("--json", a->json, "Print what was written as JSON (traces, files)");
  app.add_flag("--svg", a->svg,
               "Also render every .dot with Graphviz and draw sequence diagrams as .svg");
  app.add_option("--response-times", a->response_times,
                 "Decorate dependency graphs given without a DECORATION with response times")
      ->type_name("ns|us|ms|s");
  app.add_option("--reorder-window", a->reorder_window,
                 "Traces held to restore Kieker's trace order (0: none)")
      ->type_name("N");

  app.add_flag("--print-execution-traces,--print-Execution-Traces", o.execution_traces,
               "executionTraces.txt");
  app.add_flag("--print-message-traces,--print-Message-Traces", o.message_traces,
               "messageTraces.txt");
  app.add_flag("--print-invalid-traces,--print-invalid-Execution-Traces", o.invalid_traces,
               "invalidTraceArtifacts.txt");
  app.add_flag("--print-system-model,--print-System-Model", o.system_model, "system-entities.html");
  app.add_flag("--print-deployment-equivalence-classes,--print-Deployment-Equivalence-Classes",
               o.deployment_equivalence_classes, "traceDeploymentEquivClasses.txt");
  app.add_flag("--print-assembly-equivalence-classes,--print-Assembly-Equivalence-Classes",
               o.assembly_equivalence_classes, "traceAssemblyEquivClasses.txt");
  app.add_flag("--plot-deployment-sequence-diagrams,--plot-Deployment-Sequence-Diagrams",
               o.deployment_sequence_diagrams, "deploymentSequenceDiagram-<id>.pic");
  app.add_flag("--plot-assembly-sequence-diagrams,--plot-Assembly-Sequence-Diagrams",
               o.assembly_sequence_diagrams, "assemblySequenceDiagram-<id>.pic");
  app.add_flag("--plot-call-trees,--plot-Call-Trees", o.call_trees, "callTree-<id>.dot");
  app.add_flag("--plot-aggregated-deployment-call-tree,--plot-Aggregated-Deployment-Call-Tree",
               o.aggregated_deployment_call_tree, "aggregatedDeploymentCallTree.dot");
  app.add_flag("--plot-aggregated-assembly-call-tree,--plot-Aggregated-Assembly-Call-Tree",
               o.aggregated_assembly_call_tree, "aggregatedAssemblyCallTree.dot");
  app.add_flag("--plot-container-dependency-graph,--plot-Container-Dependency-Graph",
               a->container_graph, "containerDependencyGraph.dot");
  add_graph_option(
      app,
      "--plot-deployment-component-dependency-graph,--plot-Deployment-Component-Dependency-Graph",
      a->deployment_component, "deploymentComponentDependencyGraph.dot");
  add_graph_option(
      app, "--plot-assembly-component-dependency-graph,--plot-Assembly-Component-Dependency-Graph",
      a->assembly_component, "assemblyComponentDependencyGraph.dot");
  add_graph_option(
      app,
      "--plot-deployment-operation-dependency-graph,--plot-Deployment-Operation-Dependency-Graph",
      a->deployment_operation, "deploymentOperationDependencyGraph.dot");
  add_graph_option(
      app, "--plot-assembly-operation-dependency-graph,--plot-Assembly-Operation-Dependency-Graph",
      a->assembly_operation, "assemblyOperationDependencyGraph.dot");
  app.footer(
      "Exit status: 0 ok, 1 the log cannot be read or an output not written, 2 usage error.");
  app.callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace

SONDE_COMMAND("trace-analysis",
              "Kieker trace-analysis outputs: execution/message traces, sequence diagrams, call "
              "trees, dependency graphs, equivalence classes",
              setup_trace_analysis);

}  // namespace sonde::cli
