// `sonde graph LOG --kind calltree|dependency --out FILE`: draws the
// aggregated call tree or the operation dependency graph of a log. A .dot
// (or .gv) file gets the DOT text; .svg, .png and .pdf are rendered by
// Graphviz's `dot`, run directly (no shell).
//
// Exit status: 0 ok; 1 the log cannot be read, the picture cannot be
// rendered or written; 2 usage error.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "analysis/reconstruct/trace_analysis.hpp"
#include "analysis/render/graph_dot.hpp"
#include "analysis/render/graph_json.hpp"
#include "analysis/render/graphviz_render.hpp"
#include "cli/command.hpp"
#include "cli/output_file.hpp"

namespace sonde::cli {
namespace {

// Graphviz lays out a chain of 5,000 nodes in ~1.4 s here but grows about
// quadratically (a 100,000-deep call tree did not finish in 5 minutes), so
// larger graphs are refused before dot starts; .dot and .json have no limit.
constexpr size_t kMaxRenderedNodes = 10000;

struct GraphOptions {
  std::string log;
  std::string kind;
  std::string out;
  std::string level = "deployment";
  bool full_labels = false;
  bool no_times = false;
  bool repair = false;
};

// The Graphviz output format for a file name, "dot" for DOT text, "" if unsupported.
std::string format_for(const std::string& out) {
  std::string ext = std::filesystem::path(out).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".dot" || ext == ".gv") return "dot";
  if (ext == ".json") return "json";
  if (ext == ".svg" || ext == ".png" || ext == ".pdf") return ext.substr(1);
  return "";
}

int run_graph(const GraphOptions& o) {
  if (o.log.empty()) {
    std::cerr << "sonde graph: missing the LOG argument (a .sonde file or a log directory)\n";
    return kUsage;
  }
  if (o.kind != "calltree" && o.kind != "dependency") {
    std::cerr << "sonde graph: --kind must be calltree or dependency"
              << (o.kind.empty() ? "" : ", got '" + o.kind + "'") << "\n";
    return kUsage;
  }
  if (o.out.empty()) {
    std::cerr << "sonde graph: missing --out FILE (.dot, .svg, .png, .pdf or .json)\n";
    return kUsage;
  }
  const std::string format = format_for(o.out);
  if (format.empty()) {
    std::cerr << "sonde graph: cannot tell the format of '" << o.out
              << "': use a .dot, .gv, .svg, .png, .pdf or .json file name\n";
    return kUsage;
  }
  analysis::AnalysisOptions options;
  if (!analysis::parse_aggregation_level(o.level, &options.graph_level)) {
    std::cerr << "sonde graph: --level must be deployment or assembly, got '" << o.level << "'\n";
    return kUsage;
  }
  std::error_code fs_error;
  if (!std::filesystem::exists(o.log, fs_error)) {
    std::cerr << "sonde graph: cannot read '" << o.log << "': no such file or directory\n";
    return kFailed;
  }

  options.reconstruction.repair_event_traces = o.repair;
  options.build_call_tree = o.kind == "calltree";
  options.build_dependency_graph = o.kind == "dependency";
  const analysis::AnalysisResult result = analysis::analyze_log(o.log, options);
  for (const std::string& e : result.read.errors) std::cerr << "sonde graph: error: " << e << "\n";
  if (!result.read.ok && result.read.records == 0) {
    if (result.read.errors.empty()) std::cerr << "sonde graph: cannot read '" << o.log << "'\n";
    return kFailed;
  }
  if (result.read.lost_reported > 0) {
    std::cerr << "sonde graph: warning: '" << o.log << "': the monitor reported "
              << result.read.lost_reported << " lost events; the graph is incomplete\n";
  }
  if (result.traces.valid == 0) {
    std::cerr << "sonde graph: warning: '" << o.log << "' has no valid traces ("
              << result.traces.invalid << " invalid); the graph is empty\n";
  }

  if (format == "json") {
    const nlohmann::json doc = o.kind == "calltree" ? analysis::to_json(*result.call_tree)
                                                    : analysis::to_json(*result.dependency_graph);
    if (const std::string error = write_output_file(
            o.out, doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
        !error.empty()) {
      std::cerr << "sonde graph: " << error << "\n";
      return kFailed;
    }
    return result.read.ok ? kOk : kFailed;
  }
  analysis::DotOptions dot_options;
  dot_options.short_labels = !o.full_labels;
  dot_options.show_times = !o.no_times;
  const std::string dot = o.kind == "calltree"
                              ? analysis::to_dot(*result.call_tree, dot_options)
                              : analysis::to_dot(*result.dependency_graph, dot_options);
  std::string content = dot;
  if (format != "dot") {
    const size_t nodes = o.kind == "calltree" ? result.call_tree->nodes().size()
                                              : result.dependency_graph->nodes().size();
    if (nodes > kMaxRenderedNodes) {
      std::cerr << "sonde graph: cannot render '" << o.out << "': the graph has " << nodes
                << " nodes, more than Graphviz lays out in reasonable time (limit "
                << kMaxRenderedNodes << "); write a .dot or .json file instead\n";
      return kFailed;
    }
    analysis::RenderResult rendered = analysis::render_dot(dot, format);
    if (!rendered.ok) {
      std::cerr << "sonde graph: cannot render '" << o.out << "': " << rendered.error << "\n";
      return kFailed;
    }
    content = std::move(rendered.output);
  }
  if (const std::string error = write_output_file(o.out, content); !error.empty()) {
    std::cerr << "sonde graph: " << error << "\n";
    return kFailed;
  }
  return result.read.ok ? kOk : kFailed;
}

void setup_graph(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<GraphOptions>();
  // Validation happens in run_graph so that every usage error exits with 2.
  app.add_option("log", o->log, "The log: a .sonde file or a directory (native or Kieker)")
      ->type_name("LOG");
  app.add_option("--kind", o->kind,
                 "calltree (aggregated call tree) or dependency (operation dependency graph)")
      ->type_name("KIND");
  app.add_option("--out", o->out,
                 "Output file: .dot/.gv for DOT text; .svg/.png/.pdf via Graphviz; .json")
      ->type_name("FILE");
  app.add_option("--level", o->level,
                 "deployment (default: operations per host) or assembly (hosts merged)")
      ->type_name("LEVEL");
  app.add_flag("--full-labels", o->full_labels, "Full class names and signatures in labels");
  app.add_flag("--no-times", o->no_times, "Leave counts and mean times out of node labels");
  app.add_flag("--repair", o->repair,
               "Synthesise missing after events (Kieker's --repair-event-based-traces)");
  app.footer("Exit status: 0 ok, 1 the log cannot be read or the picture not made, 2 usage error.");
  app.callback([o, &exit_code] { exit_code = run_graph(*o); });
}

}  // namespace

SONDE_COMMAND("graph", "Draw the aggregated call tree or the operation dependency graph of a log",
              setup_graph);

}  // namespace sonde::cli
