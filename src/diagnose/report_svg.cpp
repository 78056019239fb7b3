#include "diagnose/report_svg.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "analysis/text/xml_escape.hpp"

namespace sonde::diagnose {
namespace {

constexpr double kW = 560, kH = 260, kL = 60, kR = 150, kT = 28, kB = 40;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

std::string svg_number(double v) {
  std::ostringstream o;
  o.precision(4);
  o << v;
  return o.str();
}

}  // namespace

std::string render_svg(const Chart& c) {
  using analysis::xml_escape;
  double x0 = INFINITY, x1 = -INFINITY, y0 = 0, y1 = -INFINITY;
  auto see_x = [&](double v) {
    if (std::isfinite(v)) {
      x0 = std::min(x0, v);
      x1 = std::max(x1, v);
    }
  };
  auto see_y = [&](double v) {
    if (std::isfinite(v)) {
      y0 = std::min(y0, v);
      y1 = std::max(y1, v);
    }
  };
  for (const ChartSeries& s : c.series) {
    for (double v : s.x) see_x(v);
    for (double v : s.y) see_y(v);
    for (double v : s.high) see_y(v);
  }
  for (const ChartLine& l : c.hlines) see_y(l.value);
  for (const ChartLine& l : c.vlines) see_x(l.value);
  if (!std::isfinite(x0)) {
    x0 = 0;
    x1 = 1;
  }
  if (!std::isfinite(y1)) y1 = 1;
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  y1 *= 1.08;
  const double pw = kW - kL - kR, ph = kH - kT - kB;
  auto px = [&](double v) { return kL + (v - x0) / (x1 - x0) * pw; };
  auto py = [&](double v) { return kT + ph - (v - y0) / (y1 - y0) * ph; };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH
    << "\" viewBox=\"0 0 " << kW << ' ' << kH << "\" font-family=\"sans-serif\" font-size=\"11\">";
  o << "<text x=\"" << kL << "\" y=\"16\" font-weight=\"bold\">" << xml_escape(c.title)
    << "</text>";
  for (const auto& [a, b] : c.shaded) {
    o << "<rect x=\"" << svg_number(px(a)) << "\" y=\"" << kT << "\" width=\""
      << svg_number(std::max(1.0, px(b) - px(a))) << "\" height=\"" << ph << "\" fill=\"#fdd\"/>";
  }
  o << "<rect x=\"" << kL << "\" y=\"" << kT << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" fill=\"none\" stroke=\"#888\"/>";
  for (int i = 0; i <= 4; ++i) {
    const double yv = y0 + (y1 - y0) * i / 4, xv = x0 + (x1 - x0) * i / 4;
    o << "<text x=\"" << kL - 4 << "\" y=\"" << svg_number(py(yv) + 4) << "\" text-anchor=\"end\">"
      << svg_number(yv) << "</text>";
    o << "<text x=\"" << svg_number(px(xv)) << "\" y=\"" << kT + ph + 14
      << "\" text-anchor=\"middle\">" << svg_number(xv) << "</text>";
  }
  o << "<text x=\"" << kL + pw / 2 << "\" y=\"" << kH - 6 << "\" text-anchor=\"middle\">"
    << xml_escape(c.x_label) << "</text>";
  o << "<text x=\"12\" y=\"" << kT + ph / 2 << "\" transform=\"rotate(-90 12 " << kT + ph / 2
    << ")\" text-anchor=\"middle\">" << xml_escape(c.y_label) << "</text>";
  for (const ChartLine& l : c.hlines) {
    o << "<line x1=\"" << kL << "\" x2=\"" << kL + pw << "\" y1=\"" << svg_number(py(l.value))
      << "\" y2=\"" << svg_number(py(l.value))
      << "\" stroke=\"#d62728\" stroke-dasharray=\"6 3\"/><text x=\"" << kL + pw + 4 << "\" y=\""
      << svg_number(py(l.value) + 4) << "\" fill=\"#d62728\">" << xml_escape(l.label) << "</text>";
  }
  for (const ChartLine& l : c.vlines) {
    o << "<line y1=\"" << kT << "\" y2=\"" << kT + ph << "\" x1=\"" << svg_number(px(l.value))
      << "\" x2=\"" << svg_number(px(l.value))
      << "\" stroke=\"#d62728\" stroke-dasharray=\"6 3\"/><text x=\"" << svg_number(px(l.value) + 3)
      << "\" y=\"" << kT + 10 << "\" fill=\"#d62728\">" << xml_escape(l.label) << "</text>";
  }
  for (size_t i = 0; i < c.series.size(); ++i) {
    const ChartSeries& s = c.series[i];
    const char* color = kColors[i % 6];
    std::ostringstream pts;
    for (size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) {
      if (std::isfinite(s.y[k]))
        pts << svg_number(px(s.x[k])) << ',' << svg_number(py(s.y[k])) << ' ';
    }
    o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.6\""
      << (s.dashed ? " stroke-dasharray=\"4 3\"" : "") << " points=\"" << pts.str() << "\"/>";
    for (size_t k = 0; k < s.low.size() && k < s.high.size() && k < s.x.size(); ++k) {
      if (!std::isfinite(s.low[k]) || !std::isfinite(s.high[k])) continue;
      o << "<line x1=\"" << svg_number(px(s.x[k])) << "\" x2=\"" << svg_number(px(s.x[k]))
        << "\" y1=\"" << svg_number(py(s.low[k])) << "\" y2=\"" << svg_number(py(s.high[k]))
        << "\" stroke=\"" << color << "\"/>";
    }
    o << "<text x=\"" << kL + pw + 4 << "\" y=\"" << kT + 12 + 14 * static_cast<double>(i)
      << "\" fill=\"" << color << "\">"
      << xml_escape(s.name.size() > 24 ? s.name.substr(0, 23) + "…" : s.name) << "</text>";
  }
  o << "</svg>";
  return o.str();
}

}  // namespace sonde::diagnose
