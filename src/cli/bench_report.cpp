#include "cli/bench_report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/output_file.hpp"

namespace sonde::cli::bench {
namespace {

using nlohmann::json;

std::string fmt(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

bool usable(const ConfigResult* c) { return c && c->skip_reason.empty() && c->summary.n > 0; }

json summary_json(const Summary& s) {
  return {{"n", s.n},      {"mean_ns", s.mean}, {"ci95_ns", s.ci95}, {"median_ns", s.median},
          {"q1_ns", s.q1}, {"q3_ns", s.q3},     {"min_ns", s.min},   {"max_ns", s.max}};
}

// MooBench's decomposition, per monitored call, from the configurations'
// means: I = T+I − T, C = T+I+C − T+I, W = T+I+C+W − T+I+C per writer.
json decomposition(const PointResult& p) {
  json d = json::object();
  const ConfigResult* t = p.find("T");
  const ConfigResult* ti = p.find("T+I");
  const ConfigResult* tic = p.find("T+I+C");
  if (usable(t) && usable(ti)) d["I_ns"] = ti->summary.mean - t->summary.mean;
  if (usable(ti) && usable(tic)) d["C_ns"] = tic->summary.mean - ti->summary.mean;
  if (usable(tic)) {
    json w = json::object();
    for (const auto& c : p.configs) {
      if (c.name.rfind("T+I+C+W ", 0) == 0 && usable(&c)) {
        w[c.name.substr(8)] = c.summary.mean - tic->summary.mean;
      }
    }
    d["W_ns"] = w;
  }
  // Live analysis: R is what reconstructing and storing traces on the
  // receiving side adds on the monitored side (through TCP back-pressure)
  // over writing to a receiver that only counts.
  const ConfigResult* tcp = p.find("T+I+C+W tcp");
  const ConfigResult* collect = p.find("T+I+C+W+R collect");
  if (usable(tcp) && usable(collect)) d["R_ns"] = collect->summary.mean - tcp->summary.mean;
  // The same over Kieker's TCP frames.
  const ConfigResult* kieker_tcp = p.find("T+I+C+W kieker-tcp");
  const ConfigResult* kieker_collect = p.find("T+I+C+W+R collect kieker-tcp");
  if (usable(kieker_tcp) && usable(kieker_collect)) {
    d["R_kieker_tcp_ns"] = kieker_collect->summary.mean - kieker_tcp->summary.mean;
  }
  // D: what reducing traces instead of storing each changes over R (the
  // thesis adds it on top of R; a reduction that saves more in storing than
  // it costs makes it negative).
  const ConfigResult* reduce = p.find("T+I+C+W+R+D collect --reduce");
  if (usable(collect) && usable(reduce)) d["D_ns"] = reduce->summary.mean - collect->summary.mean;
  return d;
}

// Automatic path: each configuration's overhead over T, and each peer's
// overhead divided by sonde's (how many times cheaper sonde is).
json peer_ratios(const PointResult& p) {
  json r = json::object();
  const ConfigResult* t = p.find("T");
  if (!usable(t)) return r;
  for (const std::string sonde_name : {"auto: sonde null", "auto: sonde native"}) {
    const ConfigResult* s = p.find(sonde_name);
    if (!usable(s)) continue;
    const double so = s->summary.mean - t->summary.mean;
    for (const auto& c : p.configs) {
      if (c.group != "peer" || !usable(&c) || so <= 0) continue;
      r[sonde_name][c.name] = (c.summary.mean - t->summary.mean) / so;
    }
  }
  return r;
}

// Depth scaling: overhead per trace (ns per top-level call over T) against
// the depth, fitted by a line for each configuration, once from the means
// (MooBench's) and once from the medians (robust to a busy host's outliers).
json depth_fits(const Report& rep) {
  struct Series {
    std::vector<double> depth, mean, median;
  };
  std::map<std::string, Series> series;
  for (const auto& p : rep.points) {
    if (p.experiment != "depth") continue;
    const ConfigResult* t = p.find("T");
    if (!usable(t)) continue;
    for (const auto& c : p.configs) {
      if (c.name == "T" || !usable(&c)) continue;
      Series& s = series[c.name];
      s.depth.push_back(p.workload.depth);
      s.mean.push_back((c.summary.mean - t->summary.mean) * p.workload.depth);
      s.median.push_back((c.summary.median - t->summary.median) * p.workload.depth);
    }
  }
  json out = json::object();
  for (const auto& [name, s] : series) {
    const LinearFit f = fit_line(s.depth, s.mean);
    const LinearFit m = fit_line(s.depth, s.median);
    out[name] = {{"depths", s.depth},
                 {"overhead_per_trace_ns", s.mean},
                 {"slope_ns_per_level", f.slope},
                 {"intercept_ns", f.intercept},
                 {"r2", f.r2},
                 {"median_overhead_per_trace_ns", s.median},
                 {"median_slope_ns_per_level", m.slope},
                 {"median_intercept_ns", m.intercept},
                 {"median_r2", m.r2}};
  }
  return out;
}

}  // namespace

const ConfigResult* PointResult::find(const std::string& name) const {
  for (const auto& c : configs) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

json to_json(const Report& r) {
  json j;
  j["machine"] = r.machine;
  j["loops"] = r.loops;
  j["quick"] = r.quick;
  j["timestamp_ns"] = r.timestamp_ns;
  j["floor_ns"] = 2 * r.timestamp_ns;
  j["points"] = json::array();
  for (const auto& p : r.points) {
    json pj;
    pj["experiment"] = p.experiment;
    pj["label"] = p.label;
    pj["workload"] = {{"calls", p.workload.calls},
                      {"depth", p.workload.depth},
                      {"method_time_ns", p.workload.method_time_ns},
                      {"threads", p.workload.threads},
                      {"warmup", p.workload.warmup}};
    pj["configurations"] = json::array();
    for (const auto& c : p.configs) {
      json cj;
      cj["name"] = c.name;
      cj["group"] = c.group;
      if (!c.skip_reason.empty()) {
        cj["skipped"] = c.skip_reason;
        pj["configurations"].push_back(cj);
        continue;
      }
      cj["median_ns"] = c.summary.median;
      cj["mean_ns"] = c.summary.mean;
      cj["summary"] = summary_json(c.summary);
      cj["loop_means_ns"] = c.loop_means;
      cj["writes"] = c.writes;
      cj["records_produced"] = c.records_produced;
      cj["records_written"] = c.records_written;
      if (c.reconstructs) {
        cj["traces_expected"] = c.traces_expected;
        cj["traces_reconstructed"] = c.traces_reconstructed;
        cj["traces_invalid"] = c.traces_invalid;
        cj["reduced_traces"] = c.reduced_traces;
      }
      cj["events_recorded"] = c.events_recorded;
      cj["events_written"] = c.events_written;
      cj["events_dropped"] = c.events_dropped;
      cj["bytes_per_event"] = c.bytes_per_event;
      cj["traces_per_s"] = c.traces_per_s;
      cj["records_per_s"] = c.traces_per_s * static_cast<double>(records_per_call(p.workload));
      cj["traces_per_s_bins"] = c.traces_per_s_bins;
      cj["errors"] = c.errors;
      pj["configurations"].push_back(cj);
    }
    pj["decomposition"] = decomposition(p);
    pj["peer_ratios"] = peer_ratios(p);
    j["points"].push_back(pj);
  }
  j["depth_scaling"] = depth_fits(r);
  return j;
}

std::string to_csv(const Report& r) {
  std::ostringstream o;
  o << "experiment,point,configuration,group,skipped,n,mean_ns,ci95_ns,median_ns,q1_ns,q3_ns,"
       "min_ns,max_ns,records_produced,records_written,events_dropped,bytes_per_event,"
       "traces_per_s\n";
  for (const auto& p : r.points) {
    for (const auto& c : p.configs) {
      const Summary& s = c.summary;
      std::string skipped = c.skip_reason;
      std::replace(skipped.begin(), skipped.end(), ',', ';');
      o << p.experiment << ',' << p.label << ',' << c.name << ',' << c.group << ',' << skipped
        << ',' << s.n << ',' << fmt(s.mean, 3) << ',' << fmt(s.ci95, 3) << ',' << fmt(s.median, 3)
        << ',' << fmt(s.q1, 3) << ',' << fmt(s.q3, 3) << ',' << fmt(s.min, 3) << ','
        << fmt(s.max, 3) << ',' << c.records_produced << ',' << c.records_written << ','
        << c.events_dropped << ',' << fmt(c.bytes_per_event, 3) << ',' << fmt(c.traces_per_s, 0)
        << '\n';
    }
  }
  return o.str();
}

std::string to_table(const Report& r) {
  std::ostringstream o;
  char line[512];
  for (const auto& p : r.points) {
    o << "\n"
      << p.experiment << ": " << p.label << " (" << p.workload.calls << " calls x "
      << p.workload.threads << " thread(s), depth " << p.workload.depth << ", method time "
      << p.workload.method_time_ns << " ns, " << r.loops << " loops)\n";
    std::snprintf(line, sizeof line, "%-34s %9s %9s %9s %9s %17s %8s\n", "configuration", "median",
                  "mean", "±95%", "min", "written/produced", "B/event");
    o << line;
    for (const auto& c : p.configs) {
      if (!c.skip_reason.empty()) {
        std::snprintf(line, sizeof line, "%-34s skipped: %s\n", c.name.c_str(),
                      c.skip_reason.c_str());
        o << line;
        continue;
      }
      const std::string counts =
          c.writes ? std::to_string(c.records_written) + "/" + std::to_string(c.records_produced)
                   : "-";
      std::snprintf(line, sizeof line, "%-34s %9.2f %9.2f %9.2f %9.2f %17s %8s\n", c.name.c_str(),
                    c.summary.median, c.summary.mean, c.summary.ci95, c.summary.min, counts.c_str(),
                    c.bytes_per_event > 0 ? fmt(c.bytes_per_event, 2).c_str() : "-");
      o << line;
      for (const auto& e : c.errors) o << "    error: " << e << "\n";
    }
    const json d = decomposition(p);
    if (d.contains("I_ns") && d.contains("C_ns")) {
      o << "  per monitored call: I " << fmt(d["I_ns"].get<double>()) << " ns, C "
        << fmt(d["C_ns"].get<double>()) << " ns";
      if (d.contains("W_ns")) {
        const json w = d["W_ns"];
        for (const auto& [name, v] : w.items()) o << ", W(" << name << ") " << fmt(v.get<double>());
      }
      if (d.contains("R_ns")) o << ", R(collect) " << fmt(d["R_ns"].get<double>());
      if (d.contains("R_kieker_tcp_ns")) {
        o << ", R(collect, kieker-tcp) " << fmt(d["R_kieker_tcp_ns"].get<double>());
      }
      if (d.contains("D_ns")) o << ", D(reduce) " << fmt(d["D_ns"].get<double>());
      o << "\n";
    }
    for (const auto& c : p.configs) {
      if (!c.reconstructs || !c.skip_reason.empty()) continue;
      o << "  " << c.name << ": traces reconstructed live " << c.traces_reconstructed << "/"
        << c.traces_expected << " (" << c.traces_invalid << " invalid)";
      if (c.reduced_traces > 0) o << " in " << c.reduced_traces << " reduced traces";
      o << "\n";
    }
    const json ratios = peer_ratios(p);
    for (const auto& [sonde_name, peers] : ratios.items()) {
      for (const auto& [peer, v] : peers.items()) {
        o << "  " << peer << " overhead / " << sonde_name << " overhead: " << fmt(v.get<double>())
          << "x\n";
      }
    }
  }
  const json fits = depth_fits(r);
  for (const auto& [name, f] : fits.items()) {
    o << "depth scaling " << name << ": means " << fmt(f["slope_ns_per_level"].get<double>())
      << " ns per level, R² " << fmt(f["r2"].get<double>(), 4) << "; medians "
      << fmt(f["median_slope_ns_per_level"].get<double>()) << " ns per level, R² "
      << fmt(f["median_r2"].get<double>(), 4) << "\n";
  }
  o << "ns per monitored call (call duration / depth); floor = 2 timestamps = "
    << fmt(2 * r.timestamp_ns) << " ns\n";
  return o.str();
}

namespace {

const char* kColors[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377"};

std::string svg_text(double x, double y, const std::string& s, const char* anchor = "start") {
  std::ostringstream o;
  o << "<text x='" << fmt(x, 1) << "' y='" << fmt(y, 1) << "' font-size='11' text-anchor='"
    << anchor << "' font-family='sans-serif'>" << s << "</text>\n";
  return o.str();
}

}  // namespace

std::string write_svgs(const Report& r, const std::string& dir) {
  // Stacked I/C/W bars for each writer of the first stress point.
  const PointResult* stress = nullptr;
  for (const auto& p : r.points) {
    if (p.experiment == "stress") {
      stress = &p;
      break;
    }
  }
  if (stress) {
    const json d = decomposition(*stress);
    std::vector<std::pair<std::string, double>> writers;
    if (d.contains("W_ns")) {
      const json w = d["W_ns"];
      for (const auto& [name, v] : w.items()) writers.emplace_back(name, v.get<double>());
    }
    const double i_ns = d.value("I_ns", 0.0), c_ns = d.value("C_ns", 0.0);
    double top = 1;
    for (const auto& [n, w] : writers)
      top = std::max(top, std::max(0.0, i_ns) + std::max(0.0, c_ns) + std::max(0.0, w));
    const double h = 300, base = 330, width = 80.0 * static_cast<double>(writers.size()) + 160;
    std::ostringstream s;
    s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << fmt(width, 0)
      << "' height='380'>\n<rect width='100%' height='100%' fill='white'/>\n";
    s << svg_text(10, 16, "overhead per monitored call (ns): I (probe), C (collect), W (write)");
    double x = 60;
    for (const auto& [name, w] : writers) {
      double y = base;
      const double parts[3] = {std::max(0.0, i_ns), std::max(0.0, c_ns), std::max(0.0, w)};
      for (int k = 0; k < 3; ++k) {
        const double bh = parts[k] / top * h;
        y -= bh;
        s << "<rect x='" << fmt(x, 1) << "' y='" << fmt(y, 1) << "' width='50' height='"
          << fmt(bh, 1) << "' fill='" << kColors[k] << "'/>\n";
      }
      s << svg_text(x + 25, y - 4, fmt(parts[0] + parts[1] + parts[2], 1), "middle");
      s << svg_text(x + 25, base + 14, name, "middle");
      x += 80;
    }
    const char* labels[3] = {"I", "C", "W"};
    for (int k = 0; k < 3; ++k) {
      s << "<rect x='" << fmt(x, 1) << "' y='" << 40 + 18 * k << "' width='12' height='12' fill='"
        << kColors[k] << "'/>\n"
        << svg_text(x + 16, 50 + 18 * k, labels[k]);
    }
    s << "</svg>\n";
    if (std::string error = write_output_file(dir + "/icw.svg", s.str()); !error.empty()) {
      return error;
    }
  }

  // Depth scaling: overhead per trace against depth, one line per configuration.
  const json fits = depth_fits(r);
  if (!fits.empty()) {
    double max_x = 1, max_y = 1;
    for (const auto& [name, f] : fits.items()) {
      for (const auto& v : f["depths"]) max_x = std::max(max_x, v.get<double>());
      for (const auto& v : f["median_overhead_per_trace_ns"])
        max_y = std::max(max_y, v.get<double>());
    }
    const double w = 560, h = 300, left = 60, bottom = 340;
    std::ostringstream s;
    s << "<svg xmlns='http://www.w3.org/2000/svg' width='720' height='380'>\n"
         "<rect width='100%' height='100%' fill='white'/>\n";
    s << svg_text(10, 16,
                  "median overhead per trace (ns) against recursion depth; lines: least squares");
    s << "<line x1='" << left << "' y1='" << bottom << "' x2='" << left + w << "' y2='" << bottom
      << "' stroke='black'/><line x1='" << left << "' y1='" << bottom << "' x2='" << left
      << "' y2='" << bottom - h << "' stroke='black'/>\n";
    s << svg_text(left + w, bottom + 14, fmt(max_x, 0), "end")
      << svg_text(left - 4, bottom - h + 4, fmt(max_y, 0), "end");
    int k = 0;
    for (const auto& [name, f] : fits.items()) {
      const char* color = kColors[k % 6];
      const auto& xs = f["depths"];
      const auto& ys = f["median_overhead_per_trace_ns"];
      for (size_t i = 0; i < xs.size(); ++i) {
        s << "<circle cx='" << fmt(left + xs[i].get<double>() / max_x * w, 1) << "' cy='"
          << fmt(bottom - std::max(0.0, ys[i].get<double>()) / max_y * h, 1) << "' r='3' fill='"
          << color << "'/>\n";
      }
      const double slope = f["median_slope_ns_per_level"].get<double>();
      const double icpt = f["median_intercept_ns"].get<double>();
      auto py = [&](double xv) {
        return fmt(bottom - std::clamp((icpt + slope * xv) / max_y, 0.0, 1.0) * h, 1);
      };
      s << "<line x1='" << left << "' y1='" << py(0) << "' x2='" << left + w << "' y2='"
        << py(max_x) << "' stroke='" << color << "'/>\n";
      s << svg_text(
          left + 10, 40 + 14 * k,
          name + ": " + fmt(slope) + " ns/level, R² " + fmt(f["median_r2"].get<double>(), 4));
      ++k;
    }
    s << "</svg>\n";
    if (std::string error = write_output_file(dir + "/depth.svg", s.str()); !error.empty()) {
      return error;
    }
  }
  return "";
}

}  // namespace sonde::cli::bench
