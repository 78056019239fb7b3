// A FlameGraph as a self-contained SVG: one rect per frame, its width
// proportional to the frame's total time, callees stacked on their caller
// (flame: root at the bottom; icicle: root at the top), coloured by
// component, each with a <title> tooltip (label, component, total, self,
// share of all, calls). Labels that fit are printed inside the frames, so
// the static picture is readable anywhere; an inline script (optional) adds
// click-to-zoom, a search that highlights matching frames and a details
// line on hover. Every name is escaped for XML.
#pragma once

#include <ostream>
#include <string>

#include "analysis/render/flame_graph.hpp"
#include "analysis/text/xml_escape.hpp"

namespace sonde::analysis {

struct FlameGraphSvgOptions {
  std::string title = "Flame Graph";
  std::string subtitle;   // e.g. the log's path; omitted when empty
  int width = 1200;       // px
  int frame_height = 16;  // px
  // Frames narrower than this many pixels are left out, with their callees.
  double min_width_px = 0.1;
  bool icicle = false;
  bool interactive = true;  // the inline script
};

void write_flame_graph_svg(const FlameGraph& graph, std::ostream& out,
                           const FlameGraphSvgOptions& options = {});

}  // namespace sonde::analysis
