// CSV and SVG output of the partial-instrumentation study (context_study.hpp).
// The SVG is hand-written: two panels side by side sharing the x axis
// (monitoring points); one colour per context level.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "analysis/context/context_study.hpp"
#include "analysis/text/xml_escape.hpp"
#include "stats/percentile.hpp"

namespace sonde::analysis {
namespace {

constexpr const char* kColours[kContextLevels] = {"#777777", "#1f77b4", "#2ca02c", "#d62728"};
constexpr const char* kNames[kContextLevels] = {"operation", "caller", "stack", "trace"};

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

double median(const std::vector<double>& v) { return v.empty() ? 0 : stats::percentile(v, 0.5); }

struct Panel {
  double x0, y0, w, h;  // plot area in SVG units
  double xmax, ymax;    // data ranges start at 0 (x at 1)
  double px(double x) const { return x0 + (xmax > 1 ? (x - 1) / (xmax - 1) : 0.5) * w; }
  double py(double y) const { return y0 + h - (ymax > 0 ? y / ymax : 0) * h; }
};

// Axes, ticks (5 per axis) and labels of one panel.
void axes(std::string& out, const Panel& p, const std::string& title, const std::string& ylabel) {
  out += "<rect x=\"" + fmt("%.1f", p.x0) + "\" y=\"" + fmt("%.1f", p.y0) + "\" width=\"" +
         fmt("%.1f", p.w) + "\" height=\"" + fmt("%.1f", p.h) +
         "\" fill=\"none\" stroke=\"#333\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double yv = p.ymax * i / 4, xv = 1 + (p.xmax - 1) * i / 4;
    out += "<text x=\"" + fmt("%.1f", p.x0 - 6) + "\" y=\"" + fmt("%.1f", p.py(yv) + 4) +
           "\" text-anchor=\"end\">" + fmt(p.ymax >= 10 ? "%.0f" : "%.2g", yv) + "</text>\n";
    out += "<text x=\"" + fmt("%.1f", p.px(xv)) + "\" y=\"" + fmt("%.1f", p.y0 + p.h + 16) +
           "\" text-anchor=\"middle\">" + fmt("%.0f", xv) + "</text>\n";
  }
  out += "<text x=\"" + fmt("%.1f", p.x0 + p.w / 2) + "\" y=\"" + fmt("%.1f", p.y0 - 10) +
         "\" text-anchor=\"middle\" font-weight=\"bold\">" + xml_escape(title) + "</text>\n";
  out += "<text x=\"" + fmt("%.1f", p.x0 + p.w / 2) + "\" y=\"" + fmt("%.1f", p.y0 + p.h + 34) +
         "\" text-anchor=\"middle\">monitoring points</text>\n";
  out += "<text transform=\"translate(" + fmt("%.1f", p.x0 - 44) + "," +
         fmt("%.1f", p.y0 + p.h / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
         xml_escape(ylabel) + "</text>\n";
}

// Dots for every row and the per-|S| median as a polyline, levels lo..3.
template <typename Value>
void series(std::string& out, const Panel& p, const std::vector<StudyRow>& rows, int lo,
            Value value) {
  for (int l = lo; l < kContextLevels; ++l) {
    std::map<size_t, std::vector<double>> by_k;
    out += "<g fill=\"" + std::string(kColours[l]) + "\" fill-opacity=\"0.35\">\n";
    for (const StudyRow& r : rows) {
      const double v = value(r, l);
      by_k[r.monitoring_points].push_back(v);
      out += "<circle cx=\"" + fmt("%.1f", p.px(static_cast<double>(r.monitoring_points))) +
             "\" cy=\"" + fmt("%.1f", p.py(v)) + "\" r=\"1.8\"/>\n";
    }
    out += "</g>\n<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" +
           std::string(kColours[l]) + "\" points=\"";
    for (const auto& [k, vs] : by_k)
      out += fmt("%.1f", p.px(static_cast<double>(k))) + "," + fmt("%.1f", p.py(median(vs))) + " ";
    out += "\"/>\n";
  }
}

}  // namespace

std::string study_csv(const std::vector<StudyRow>& rows) {
  std::string out =
      "monitoring_points,run,executions,traces,operation_contexts,caller_contexts,stack_contexts,"
      "trace_contexts,caller_reduction_percent,stack_reduction_percent,trace_reduction_percent\n";
  for (const StudyRow& r : rows) {
    const ProjectionResult& p = r.result;
    out += std::to_string(r.monitoring_points) + "," + std::to_string(r.run) + "," +
           std::to_string(p.executions) + "," + std::to_string(p.traces);
    for (size_t c : p.contexts) out += "," + std::to_string(c);
    for (int l = 1; l < kContextLevels; ++l)
      out += "," + fmt("%.4f", p.reduction_percent[static_cast<size_t>(l)]);
    out += "\n";
  }
  return out;
}

std::string study_svg(const std::vector<StudyRow>& rows, const std::string& title) {
  double xmax = 1, cmax = 1, rmax = 1;
  for (const StudyRow& r : rows) {
    xmax = std::max(xmax, static_cast<double>(r.monitoring_points));
    for (int l = 1; l < kContextLevels; ++l) {
      cmax = std::max(cmax, static_cast<double>(r.result.contexts[static_cast<size_t>(l)]));
      rmax = std::max(rmax, r.result.reduction_percent[static_cast<size_t>(l)]);
    }
  }
  rmax = std::min(100.0, std::ceil(rmax / 10) * 10);
  const Panel contexts{70, 60, 400, 300, xmax, cmax};
  const Panel reduction{560, 60, 400, 300, xmax, rmax};
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1000\" height=\"450\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<title>" +
      xml_escape(title) + "</title>\n<rect width=\"1000\" height=\"450\" fill=\"white\"/>\n";
  axes(out, contexts, "Contexts vs monitoring points (Fig. 8)", "number of contexts");
  axes(out, reduction, "σ reduction vs monitoring points (Fig. 9)", "σ reduction (%)");
  series(out, contexts, rows, 1, [](const StudyRow& r, int l) {
    return static_cast<double>(r.result.contexts[static_cast<size_t>(l)]);
  });
  series(out, reduction, rows, 1, [](const StudyRow& r, int l) {
    return r.result.reduction_percent[static_cast<size_t>(l)];
  });
  // Legend; lines are the median over the runs at each number of points.
  for (int l = 1; l < kContextLevels; ++l) {
    const double y = 410 + 14 * (l - 1);
    out += "<rect x=\"70\" y=\"" + fmt("%.0f", y - 8) + "\" width=\"10\" height=\"10\" fill=\"" +
           kColours[l] + "\"/><text x=\"86\" y=\"" + fmt("%.0f", y + 1) + "\">" + kNames[l] +
           " context</text>\n";
  }
  out += "<text x=\"560\" y=\"410\">" + xml_escape(title) +
         "</text>\n<text x=\"560\" y=\"424\">dots: one instrumentation each; lines: median per "
         "number of points</text>\n</svg>\n";
  return out;
}

}  // namespace sonde::analysis
