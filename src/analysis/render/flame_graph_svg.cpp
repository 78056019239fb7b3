#include "analysis/render/flame_graph_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "analysis/export/export_support.hpp"
#include "analysis/text/duration_format.hpp"

namespace sonde::analysis {
namespace {

constexpr double kPad = 10;
constexpr double kFooter = 26;
constexpr double kCharWidth = 6.6;  // 11 px monospace

// Click-to-zoom, search and the details line. Reads everything it needs
// from the static SVG (rect geometry, the first <title> line as the name),
// so the picture does not depend on it.
constexpr const char* kScript = R"JS(
(function () {
  var PAD = 10, CW = 6.6, W = +document.documentElement.getAttribute('width');
  var ICICLE = document.documentElement.getAttribute('data-icicle') === 'true';
  var frames = Array.prototype.slice.call(document.getElementsByClassName('frame'));
  var details = document.getElementById('details'), matched = document.getElementById('matched');
  var unzoom = document.getElementById('unzoom'), idle = details.textContent;
  frames.forEach(function (g) {
    var r = g.getElementsByTagName('rect')[0];
    g.x0 = +r.getAttribute('x'); g.w0 = +r.getAttribute('width'); g.y0 = +r.getAttribute('y');
    g.fill0 = r.getAttribute('fill');
    g.info = g.getElementsByTagName('title')[0].textContent;
    g.name = g.info.split('\n')[0];
    g.addEventListener('click', function () { zoom(g); });
    g.addEventListener('mouseover', function () { details.textContent = g.info.replace(/\n/g, ' | '); });
    g.addEventListener('mouseout', function () { details.textContent = idle; });
  });
  function place(g, x, w) {
    var r = g.getElementsByTagName('rect')[0], t = g.getElementsByTagName('text')[0];
    r.setAttribute('x', x); r.setAttribute('width', w);
    t.setAttribute('x', x + 3);
    var n = Math.floor((w - 6) / CW), chars = Array.from(g.name);
    t.textContent = n < 3 ? '' : chars.length <= n ? g.name : chars.slice(0, n - 2).join('') + '..';
  }
  function zoom(f) {
    var s = (W - 2 * PAD) / f.w0, eps = 1e-6;
    frames.forEach(function (g) {
      var within = g.x0 >= f.x0 - eps && g.x0 + g.w0 <= f.x0 + f.w0 + eps;
      var covers = g.x0 <= f.x0 + eps && g.x0 + g.w0 >= f.x0 + f.w0 - eps;
      var outer = ICICLE ? g.y0 < f.y0 : g.y0 > f.y0;
      var inner = ICICLE ? g.y0 > f.y0 : g.y0 < f.y0;
      if (g === f || (inner && within)) {
        g.style.display = ''; place(g, PAD + (g.x0 - f.x0) * s, g.w0 * s);
      } else if (outer && covers) {
        g.style.display = ''; place(g, PAD, W - 2 * PAD);
      } else {
        g.style.display = 'none';
      }
    });
    unzoom.style.opacity = 1;
  }
  function reset() {
    frames.forEach(function (g) { g.style.display = ''; place(g, g.x0, g.w0); });
    unzoom.style.opacity = 0;
  }
  function search() {
    var term = window.prompt('Highlight frames matching (regular expression):', '');
    if (term === null) return;
    var re;
    try { re = new RegExp(term); } catch (e) { window.alert('Not a regular expression: ' + term); return; }
    var hits = [];
    frames.forEach(function (g) {
      var hit = term !== '' && re.test(g.name);
      g.getElementsByTagName('rect')[0].setAttribute('fill', hit ? 'rgb(230,0,230)' : g.fill0);
      if (hit) hits.push(g);
    });
    hits.sort(function (a, b) { return a.x0 - b.x0; });
    var sum = 0, end = -1;
    hits.forEach(function (g) { if (g.x0 >= end - 1e-6) { sum += g.w0; end = g.x0 + g.w0; } });
    matched.textContent = term === '' ? '' : 'Matched: ' + (100 * sum / (W - 2 * PAD)).toFixed(1) + '%';
  }
  unzoom.addEventListener('click', reset);
  document.getElementById('search').addEventListener('click', search);
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') reset();
    else if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); search(); }
  });
})();
)JS";

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// A warm colour picked by a hash of the component, so one component keeps
// one colour across the picture and across runs.
std::string colour_for(std::string_view component) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (const char c : component) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  const unsigned r = 205 + h % 50;
  const unsigned g = 60 + (h / 50) % 160;
  const unsigned b = 20 + (h / 8000) % 60;
  return "rgb(" + std::to_string(r) + "," + std::to_string(g) + "," + std::to_string(b) + ")";
}

// The label cut to what fits in `width` pixels ("getBo.."), by code point.
std::string fitted_label(const std::string& label, double width) {
  const double fit = std::floor((width - 6) / kCharWidth);
  if (fit < 3) return "";
  const size_t max_chars = static_cast<size_t>(fit);
  std::vector<size_t> starts;  // byte offset of each code point
  for (size_t i = 0; i < label.size(); ++i) {
    if ((static_cast<unsigned char>(label[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  if (starts.size() <= max_chars) return label;
  return label.substr(0, starts[max_chars - 2]) + "..";
}

std::string tooltip(const FlameGraph& graph, const FlameFrame& frame) {
  const double all = static_cast<double>(graph.total());
  const double share = all > 0 ? 100.0 * static_cast<double>(frame.total) / all : 0;
  std::string text = graph.label(frame) + "\n";
  if (frame.parent < 0) {
    text += "total: " + format_duration(static_cast<double>(frame.total)) + " in " +
            std::to_string(graph.traces()) + (graph.traces() == 1 ? " trace" : " traces");
    return text;
  }
  text += "component: " + graph.text(frame.component) + "\n";
  text +=
      "total: " + format_duration(static_cast<double>(frame.total)) + " (" + number(share) + "%)\n";
  text += "self: " + format_duration(static_cast<double>(frame.self)) + "\n";
  text += "calls: " + std::to_string(frame.calls);
  if (frame.failed > 0) text += " (" + std::to_string(frame.failed) + " failed)";
  return text;
}

}  // namespace

void write_flame_graph_svg(const FlameGraph& graph, std::ostream& out,
                           const FlameGraphSvgOptions& options) {
  const std::vector<FlameFrame>& frames = graph.frames();
  const double width = std::max(options.width, 100);
  const double frame_height = std::max(options.frame_height, 4);
  const double usable = width - 2 * kPad;
  const double scale = graph.total() > 0 ? usable / static_cast<double>(graph.total()) : 0;

  // Lay frames out left to right in label order, pre-order so a caller is
  // placed before its callees; too narrow frames are dropped with their callees.
  std::vector<double> x(frames.size(), kPad);
  std::vector<int32_t> shown;  // pre-order
  std::vector<int32_t> todo{0};
  int32_t max_depth = 0;
  while (!todo.empty()) {
    const int32_t f = todo.back();
    todo.pop_back();
    shown.push_back(f);
    max_depth = std::max(max_depth, frames[f].depth);
    std::vector<int32_t> children = frames[f].children;
    std::sort(children.begin(), children.end(), [&](int32_t a, int32_t b) {
      return graph.label(frames[a]) < graph.label(frames[b]);
    });
    double next_x = x[f];
    std::vector<int32_t> visible;
    for (int32_t c : children) {
      x[c] = next_x;
      const double w = static_cast<double>(frames[c].total) * scale;
      next_x += w;
      if (w >= options.min_width_px && w > 0) visible.push_back(c);
    }
    todo.insert(todo.end(), visible.rbegin(), visible.rend());
  }

  const double header = options.subtitle.empty() ? 44 : 62;
  const double height = header + (max_depth + 1) * frame_height + kFooter;
  const std::string summary = std::to_string(graph.traces()) +
                              (graph.traces() == 1 ? " trace, " : " traces, ") +
                              format_duration(static_cast<double>(graph.total())) + " in all";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
      << "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
      << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " " << height
      << "\" data-icicle=\"" << (options.icicle ? "true" : "false") << "\">\n"
      << "<style>text{font-family:monospace;font-size:11px;fill:#000}"
         ".frame:hover rect{stroke:#000;stroke-width:0.5}"
         "#title{font-size:17px}#subtitle{fill:#555}#unzoom,#search{cursor:pointer}</style>\n"
      << "<rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height
      << "\" fill=\"#f8f8f0\"/>\n"
      << "<text id=\"title\" x=\"" << number(width / 2) << "\" y=\"24\" text-anchor=\"middle\">"
      << xml_escape(options.title) << "</text>\n";
  if (!options.subtitle.empty()) {
    out << "<text id=\"subtitle\" x=\"" << number(width / 2)
        << "\" y=\"42\" text-anchor=\"middle\">" << xml_escape(options.subtitle) << "</text>\n";
  }
  if (options.interactive) {
    out << "<text id=\"unzoom\" x=\"" << kPad << "\" y=\"" << number(header - 8)
        << "\" style=\"opacity:0\">Reset Zoom</text>\n"
        << "<text id=\"search\" x=\"" << number(width - kPad) << "\" y=\"" << number(header - 8)
        << "\" text-anchor=\"end\">Search</text>\n"
        << "<text id=\"matched\" x=\"" << number(width - kPad) << "\" y=\"" << number(height - 9)
        << "\" text-anchor=\"end\"></text>\n";
  }
  out << "<text id=\"details\" x=\"" << kPad << "\" y=\"" << number(height - 9) << "\">"
      << xml_escape(summary) << "</text>\n";

  out << "<g id=\"frames\">\n";
  for (const int32_t f : shown) {
    const FlameFrame& frame = frames[f];
    const double w = f == 0 ? usable : static_cast<double>(frame.total) * scale;
    const int32_t row = options.icicle ? frame.depth : max_depth - frame.depth;
    const double y = header + row * frame_height;
    const std::string fill =
        f == 0 ? std::string("rgb(200,200,200)") : colour_for(graph.text(frame.component));
    out << "<g class=\"frame\"><title>" << xml_escape(tooltip(graph, frame)) << "</title><rect x=\""
        << number(x[f]) << "\" y=\"" << number(y) << "\" width=\"" << number(w) << "\" height=\""
        << number(frame_height - 1) << "\" fill=\"" << fill << "\" rx=\"2\" ry=\"2\"";
    if (frame.failed > 0) out << " stroke=\"rgb(140,0,0)\" stroke-width=\"1\"";
    out << "/><text x=\"" << number(x[f] + 3) << "\" y=\"" << number(y + frame_height - 4.5)
        << "\">" << xml_escape(fitted_label(graph.label(frame), w)) << "</text></g>\n";
  }
  out << "</g>\n";
  if (options.interactive) {
    out << "<script type=\"text/ecmascript\"><![CDATA[" << kScript << "]]></script>\n";
  }
  out << "</svg>\n";
}

}  // namespace sonde::analysis
