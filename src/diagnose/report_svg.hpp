// A small line chart as inline SVG for the HTML report: series of points
// with optional error bars, horizontal and vertical reference lines and
// shaded x-ranges. Every text goes through xml_escape.
#pragma once

#include <string>
#include <vector>

namespace sonde::diagnose {

struct ChartSeries {
  std::string name;
  std::vector<double> x, y;
  std::vector<double> low, high;  // error bars (same size as y) or empty
  bool dashed = false;
};

struct ChartLine {
  double value = 0;
  std::string label;
};

struct Chart {
  std::string title, x_label, y_label;
  std::vector<ChartSeries> series;
  std::vector<ChartLine> hlines, vlines;
  std::vector<std::pair<double, double>> shaded;  // x ranges
};

std::string render_svg(const Chart& chart);

}  // namespace sonde::diagnose
