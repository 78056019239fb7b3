#include "analysis/kieker/sequence_diagram_svg.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "analysis/text/utf8_scan.hpp"

namespace sonde::analysis {
namespace {

// Geometry in SVG user units (px). Text is monospace so widths can be
// estimated without font metrics.
constexpr double kMargin = 20;
constexpr double kCharWidth = 7.2;
constexpr double kFontSize = 12;
constexpr double kBoxHeight = 40;
constexpr double kBoxPadding = 10;
constexpr double kMinBoxWidth = 60;
constexpr double kGap = 40;
constexpr double kRow = 30;
constexpr double kBarWidth = 10;
constexpr double kNestOffset = 5;
constexpr double kLoopWidth = 30;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Code points, for width estimates.
size_t text_length(std::string_view text) {
  size_t n = 0;
  for (size_t i = 0; i < text.size(); ++n) {
    const size_t len = utf8_sequence_length(text, i);
    i += len == 0 ? 1 : len;
  }
  return n;
}

double text_width(std::string_view text) {
  return static_cast<double>(text_length(text)) * kCharWidth;
}

std::string text_element(double x, double y, std::string_view anchor, std::string_view text) {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + std::string(anchor) +
         "\">" + xml_escape(text) + "</text>\n";
}

std::string line_element(double x1, double y1, double x2, double y2, std::string_view extra) {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
         num(y2) + "\" " + std::string(extra) + "/>\n";
}

struct Bar {
  size_t participant;
  int level;  // 0 = outermost
  double top;
  double bottom = 0;
};

class Renderer {
 public:
  explicit Renderer(const SequenceDiagram& d) : d_(d) {
    layout_columns();
    header_bottom_ = kMargin + kBoxHeight;
  }

  std::string render() {
    // The actor is active for the whole diagram, as in Kieker's diagrams.
    double y = header_bottom_ + kRow / 2;
    open_bar(0, y);
    for (const SequenceMessage& m : d_.messages) {
      y += kRow;
      if (m.call) {
        y = draw_call(m, y);
      } else {
        draw_reply(m, y);
        close_bar(m.from, y);
      }
    }
    y += kRow / 2;
    for (size_t p = 0; p < depth_.size(); ++p) {
      while (depth_[p] > 0) close_bar(p, y);
    }
    const double height = y + kMargin;
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width_) + "\" height=\"" +
           num(height) + "\" viewBox=\"0 0 " + num(width_) + " " + num(height) + "\">\n";
    out += "<title>Sequence diagram of trace " + std::to_string(d_.trace_id) + "</title>\n";
    out +=
        "<defs>\n"
        "<marker id=\"call\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" "
        "markerHeight=\"8\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"black\"/>"
        "</marker>\n"
        "<marker id=\"return\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" "
        "markerHeight=\"8\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10\" fill=\"none\" "
        "stroke=\"black\"/></marker>\n"
        "</defs>\n";
    out +=
        "<g font-family=\"monospace\" font-size=\"" + num(kFontSize) + "\" stroke-width=\"1\">\n";
    for (size_t p = 0; p < center_.size(); ++p) {
      out += line_element(center_[p], header_bottom_, center_[p], y,
                          "stroke=\"gray\" stroke-dasharray=\"4,3\"");
    }
    for (const Bar& b : bars_) {
      out += "<rect x=\"" + num(bar_left(b.participant, b.level)) + "\" y=\"" + num(b.top) +
             "\" width=\"" + num(kBarWidth) + "\" height=\"" + num(b.bottom - b.top) +
             "\" fill=\"white\" stroke=\"black\"/>\n";
    }
    out += arrows_;
    out += headers();
    out += "</g>\n</svg>\n";
    return out;
  }

 private:
  void layout_columns() {
    double right = kMargin;
    for (const SequenceParticipant& p : d_.participants) {
      const double w = std::max({kMinBoxWidth, text_width(p.host) + 2 * kBoxPadding,
                                 text_width(p.component) + 2 * kBoxPadding});
      center_.push_back(right + w / 2);
      box_width_.push_back(w);
      right += w + kGap;
    }
    double label_room = 0;  // self-calls put their label right of the loop
    for (const SequenceMessage& m : d_.messages) {
      if (m.call && m.from == m.to) {
        label_room = std::max(label_room, kLoopWidth + text_width(m.label) + kBoxPadding);
      }
    }
    width_ = right - kGap + kMargin + label_room;
    depth_.assign(d_.participants.size(), 0);
    open_.assign(d_.participants.size(), {});
  }

  double bar_left(size_t p, int level) const {
    return center_[p] - kBarWidth / 2 + level * kNestOffset;
  }
  // Where arrows meet participant p's innermost bar (its lifeline if none).
  double edge(size_t p, bool right_side) const {
    if (depth_[p] == 0) return center_[p];
    const double left = bar_left(p, depth_[p] - 1);
    return right_side ? left + kBarWidth : left;
  }

  void open_bar(size_t p, double y) {
    open_[p].push_back(bars_.size());
    bars_.push_back({p, depth_[p], y});
    ++depth_[p];
  }
  void close_bar(size_t p, double y) {
    if (depth_[p] == 0) return;
    bars_[open_[p].back()].bottom = y;
    open_[p].pop_back();
    --depth_[p];
  }

  double draw_call(const SequenceMessage& m, double y) {
    if (m.from == m.to) {
      // A call to itself: a loop to the right, into a nested bar.
      const double x = edge(m.from, true);
      const double y2 = y + kRow / 2;
      open_bar(m.to, y2);
      const double x2 = edge(m.to, true);
      arrows_ += "<path d=\"M" + num(x) + "," + num(y) + " H" + num(x + kLoopWidth) + " V" +
                 num(y2) + " H" + num(x2) + "\" fill=\"none\" stroke=\"black\" " +
                 "marker-end=\"url(#call)\"/>\n";
      arrows_ += text_element(x + kLoopWidth + 4, y + kFontSize / 2, "start", m.label);
      return y2;
    }
    const bool rightward = center_[m.from] < center_[m.to];
    const double x1 = edge(m.from, rightward);
    open_bar(m.to, y);
    const double x2 = edge(m.to, !rightward);
    arrows_ += line_element(x1, y, x2, y, "stroke=\"black\" marker-end=\"url(#call)\"");
    arrows_ += text_element((x1 + x2) / 2, y - 4, "middle", m.label);
    return y;
  }

  void draw_reply(const SequenceMessage& m, double y) {
    const bool rightward = center_[m.from] < center_[m.to];
    const double x1 = edge(m.from, rightward);
    const double x2 = edge(m.to, !rightward);
    if (m.from == m.to) {
      // Back from the nested bar to the one below it, as a small loop.
      const int outer = depth_[m.from] - 2;
      const double back = outer < 0 ? center_[m.from] : bar_left(m.from, outer) + kBarWidth;
      arrows_ += "<path d=\"M" + num(edge(m.from, true)) + "," + num(y) + " H" +
                 num(back + kLoopWidth) + " V" + num(y + kRow / 3) + " H" + num(back) +
                 "\" fill=\"none\" stroke=\"black\" stroke-dasharray=\"5,3\" " +
                 "marker-end=\"url(#return)\"/>\n";
      return;
    }
    arrows_ += line_element(x1, y, x2, y,
                            "stroke=\"black\" stroke-dasharray=\"5,3\" "
                            "marker-end=\"url(#return)\"");
    if (!m.label.empty()) arrows_ += text_element((x1 + x2) / 2, y - 4, "middle", m.label);
  }

  std::string headers() const {
    std::string out;
    for (size_t p = 0; p < center_.size(); ++p) {
      const SequenceParticipant& part = d_.participants[p];
      const double cx = center_[p];
      if (p == 0) {  // 'Entry': a stick figure
        const double top = kMargin;
        out += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(top + 6) +
               "\" r=\"6\" fill=\"white\" stroke=\"black\"/>\n";
        out += line_element(cx, top + 12, cx, top + 26, "stroke=\"black\"");
        out += line_element(cx - 10, top + 17, cx + 10, top + 17, "stroke=\"black\"");
        out += line_element(cx, top + 26, cx - 7, top + kBoxHeight, "stroke=\"black\"");
        out += line_element(cx, top + 26, cx + 7, top + kBoxHeight, "stroke=\"black\"");
        continue;
      }
      const double w = box_width_[p];
      out += "<rect x=\"" + num(cx - w / 2) + "\" y=\"" + num(kMargin) + "\" width=\"" + num(w) +
             "\" height=\"" + num(kBoxHeight) + "\" fill=\"white\" stroke=\"black\"/>\n";
      if (part.host.empty()) {
        out += text_element(cx, kMargin + kBoxHeight / 2 + 4, "middle", part.component);
      } else {
        out += text_element(cx, kMargin + 16, "middle", part.host);
        out += text_element(cx, kMargin + 32, "middle", part.component);
      }
    }
    return out;
  }

  const SequenceDiagram& d_;
  std::vector<double> center_, box_width_;
  double width_ = 0;
  double header_bottom_ = 0;
  std::vector<int> depth_;                 // open bars per participant
  std::vector<std::vector<size_t>> open_;  // indices into bars_, innermost last
  std::vector<Bar> bars_;
  std::string arrows_;
};

}  // namespace

std::string sequence_diagram_svg(const SequenceDiagram& diagram) {
  return Renderer(diagram).render();
}

}  // namespace sonde::analysis
