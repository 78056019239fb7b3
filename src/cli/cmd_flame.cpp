// `sonde flame LOG --out FILE`: the flame graph of all valid traces of a
// log. A .svg file gets the picture (self-contained, click to zoom), a
// .folded file the folded stacks for flamegraph.pl, inferno or speedscope.
// Frame values are exclusive (self) time in nanoseconds.
//
// Exit status: 0 ok; 1 the log cannot be read or the file not written; 2
// usage error.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "analysis/export/export_support.hpp"
#include "analysis/reconstruct/trace_analysis.hpp"
#include "analysis/reconstruct/trace_stitcher.hpp"
#include "analysis/render/flame_graph.hpp"
#include "analysis/render/flame_graph_svg.hpp"
#include "cli/command.hpp"
#include "format/log_reader.hpp"

namespace sonde::cli {
namespace {

struct FlameOptions {
  std::string log;
  std::string out;
  std::string title;
  std::string min_width = "0.1";
  std::string focus;
  int width = 1200;
  size_t max_depth = analysis::FlameGraph::kDefaultFoldedDepth;
  bool icicle = false;
  bool full_labels = false;
  bool separate_parts = false;
  bool no_script = false;
  bool repair = false;
};

std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// "0.5" (pixels) or "0.2%" (of the picture's width) -> pixels; false if malformed.
bool parse_min_width(const std::string& text, int width, double* px) {
  if (text.empty()) return false;
  const bool percent = text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  std::istringstream in(number);
  double value = 0;
  if (!(in >> value) || !in.eof() || !std::isfinite(value) || value < 0) return false;
  *px = percent ? value / 100.0 * (width - 20) : value;
  return true;
}

int run_flame(const FlameOptions& o) {
  if (o.log.empty()) {
    std::cerr << "sonde flame: missing the LOG argument (a .sonde file or a log directory)\n";
    return kUsage;
  }
  if (o.out.empty()) {
    std::cerr << "sonde flame: missing --out FILE (.svg or .folded)\n";
    return kUsage;
  }
  const std::string ext = extension_of(o.out);
  if (ext != ".svg" && ext != ".folded") {
    std::cerr << "sonde flame: cannot tell the format of '" << o.out
              << "': use a .svg or .folded file name\n";
    return kUsage;
  }
  if (o.width < 100 || o.width > 100000) {
    std::cerr << "sonde flame: --width must be between 100 and 100000 pixels, got " << o.width
              << "\n";
    return kUsage;
  }
  double min_width_px = 0;
  if (!parse_min_width(o.min_width, o.width, &min_width_px)) {
    std::cerr << "sonde flame: --min-width must be pixels (0.1) or a percentage (0.5%), got '"
              << o.min_width << "'\n";
    return kUsage;
  }
  std::error_code fs_error;
  if (!std::filesystem::exists(o.log, fs_error)) {
    std::cerr << "sonde flame: cannot read '" << o.log << "': no such file or directory\n";
    return kFailed;
  }

  analysis::FlameGraphOptions flame_options;
  flame_options.short_labels = !o.full_labels;
  flame_options.graft_continued_parts = !o.separate_parts;
  flame_options.focus = o.focus;
  analysis::FlameGraph flame(flame_options);
  // Continued traces (other threads, other processes) hang under their caller.
  analysis::TraceStitcher stitcher(flame);

  analysis::AnalysisOptions options;
  options.reconstruction.repair_event_traces = o.repair;
  options.build_call_tree = false;
  options.build_dependency_graph = false;
  analysis::TraceAnalysis analysis(options);
  analysis.add_sink(stitcher);
  const format::LogReadStats read = format::read_log(o.log, analysis.records());
  const analysis::AnalysisResult result = analysis.finish();
  stitcher.finish();

  for (const std::string& e : read.errors) std::cerr << "sonde flame: error: " << e << "\n";
  if (!read.ok && read.records == 0) {
    if (read.errors.empty()) std::cerr << "sonde flame: cannot read '" << o.log << "'\n";
    return kFailed;
  }
  if (read.lost_reported > 0) {
    std::cerr << "sonde flame: warning: '" << o.log << "': the monitor reported "
              << read.lost_reported << " lost events; the flame graph is incomplete\n";
  }
  if (result.traces.valid == 0) {
    std::cerr << "sonde flame: warning: '" << o.log << "' has no valid traces ("
              << result.traces.invalid << " invalid); the flame graph is empty\n";
  }

  std::ofstream file(o.out, std::ios::binary | std::ios::trunc);
  if (file) {
    if (ext == ".svg") {
      analysis::FlameGraphSvgOptions svg;
      svg.title = o.title.empty() ? "Flame Graph" : o.title;
      svg.subtitle = o.log;
      if (!o.focus.empty()) svg.subtitle += " (focus: " + o.focus + ")";
      svg.width = o.width;
      svg.min_width_px = min_width_px;
      svg.icicle = o.icicle;
      svg.interactive = !o.no_script;
      analysis::write_flame_graph_svg(flame, file, svg);
    } else {
      flame.write_folded(file, o.max_depth);
    }
    file.close();
  }
  if (!file) {
    std::cerr << "sonde flame: cannot write '" << o.out << "': " << std::strerror(errno) << "\n";
    return kFailed;
  }
  return read.ok ? kOk : kFailed;
}

void setup_flame(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<FlameOptions>();
  // Validation happens in run_flame so that every usage error exits with 2.
  app.add_option("log", o->log, "The log: a .sonde file or a directory (native or Kieker)")
      ->type_name("LOG");
  app.add_option("--out", o->out, "Output file: .svg (flame graph) or .folded (folded stacks)")
      ->type_name("FILE");
  app.add_option("--title", o->title, "Title of the SVG (default: Flame Graph)")->type_name("TEXT");
  app.add_option("--min-width", o->min_width,
                 "SVG: leave out frames narrower than this, in pixels (0.1) or percent (0.5%)")
      ->type_name("WIDTH");
  app.add_option("--width", o->width, "SVG: width in pixels (default 1200)")->type_name("PX");
  app.add_option("--max-depth", o->max_depth,
                 "Folded stacks: frames below this depth become one '[deeper frames folded]' "
                 "frame (default 1024; every line repeats its stack, so deep recursion would "
                 "otherwise grow the file with depth squared)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30))
      ->type_name("N");
  app.add_option("--focus", o->focus,
                 "Only time in frames whose label or signature contains TEXT, and their callees")
      ->type_name("TEXT");
  app.add_flag("--icicle", o->icicle, "SVG: root at the top, callees below (icicle graph)");
  app.add_flag("--full-labels", o->full_labels, "Frames named by full signatures");
  app.add_flag("--separate-parts", o->separate_parts,
               "Continued parts of a trace as stacks of their own, not under their caller");
  app.add_flag("--no-script", o->no_script, "SVG: no inline script (no zoom or search)");
  app.add_flag("--repair", o->repair,
               "Synthesise missing after events (Kieker's --repair-event-based-traces)");
  app.footer("Exit status: 0 ok, 1 the log cannot be read or the file not written, 2 usage error.");
  app.callback([o, &exit_code] { exit_code = run_flame(*o); });
}

}  // namespace

SONDE_COMMAND("flame", "Draw a flame graph (SVG) or write folded stacks of a log's traces",
              setup_flame);

}  // namespace sonde::cli
