// A workload for the reduced-trace readers (store and serve tests): BURSTS
// bursts 10 s apart, each of PER_BURST traces 1 ms apart, so a 1-s
// reduction window holds exactly one burst. Trace i of a burst has shape
// shape_of(i) (three shapes, counts 3:2:1 per six traces, one with a
// hostile root operation); every expected figure is computed from these
// parameters by the functions below, never copied from output.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/trace_model.hpp"

namespace sonde::store::test {

struct ReducedWorkload {
  static constexpr int kShapes = 3;
  static constexpr int64_t kT0 = 1'700'000'000'000'000'000;
  static constexpr int64_t kBurstGap = 10'000'000'000;  // 10 s
  static constexpr int64_t kSpacing = 1'000'000;        // 1 ms
  static constexpr int64_t kWindow = 1'000'000'000;     // the reduction window: 1 s
  inline static const std::array<std::string, kShapes> kRoots = {
      "public void shop.Front.list()", "public void shop.Front.show(int)",
      "<img src=x onerror=\"window.__pwned=1\"> & <b>bold</b> 'q'"};
  inline static const std::array<std::string, kShapes> kHosts = {"h1", "h1", "h2"};
  inline static const std::string kChild = "int shop.Back.load(int)";
  inline static const std::string kComponent = "shop.Back";

  int bursts = 3;
  int per_burst = 60;

  // 0,0,0,1,1,2 repeating: per six traces three of shape 0, two of 1, one of 2.
  static int shape_of(int i) { return i % 6 < 3 ? 0 : i % 6 < 5 ? 1 : 2; }
  static int children_of(int shape) { return shape + 1; }
  static int64_t start_of(int burst, int i) { return kT0 + burst * kBurstGap + i * kSpacing; }
  static int64_t duration_of(int i) { return 6000 + 10 * i; }  // outlasts every child
  static int64_t child_duration_of(int child, int i) { return 1000 + 100 * child + i; }
  static bool fails(int i) { return i % 7 == 0; }  // the first child leaves by an exception
  int64_t traces() const { return int64_t{bursts} * per_burst; }

  // Trace i of a burst; its strings point into the constants above.
  static analysis::Trace trace(int burst, int i, int64_t id) {
    const int s = shape_of(i);
    analysis::Trace t;
    t.trace_id = id;
    t.parent_trace_id = id;
    t.host = kHosts[s];
    analysis::Execution root;
    root.operation = kRoots[s];
    root.component = kComponent;
    root.host = kHosts[s];
    root.tin = start_of(burst, i);
    root.tout = root.tin + duration_of(i);
    t.executions.push_back(root);
    for (int c = 0; c < children_of(s); ++c) {
      analysis::Execution e;
      e.operation = kChild;
      e.component = kComponent;
      e.host = kHosts[s];
      e.eoi = c + 1;
      e.ess = 1;
      e.tin = root.tin + 10 + c * 1500;
      e.tout = e.tin + child_duration_of(c, i);
      e.failed = c == 0 && fails(i);
      if (e.failed) e.cause = kRoots[2];
      t.executions.push_back(e);
    }
    return t;
  }

  // What one reduced row (burst, shape) must hold.
  struct Row {
    int burst = 0, shape = 0;
    uint64_t traces = 0, failed = 0;
    int64_t first_start = 0, last_start = 0, min = 0, max = 0;
    double mean = 0;
    std::vector<double> child_mean;  // per child position
  };
  // In window order: burst, then shape (a shape's first trace comes at i = 0, 3, 5).
  std::vector<Row> rows() const {
    std::vector<Row> out;
    for (int b = 0; b < bursts; ++b) {
      for (int s = 0; s < kShapes; ++s) {
        Row r;
        r.burst = b;
        r.shape = s;
        r.child_mean.assign(static_cast<size_t>(children_of(s)), 0.0);
        double sum = 0;
        for (int i = 0; i < per_burst; ++i) {
          if (shape_of(i) != s) continue;
          if (r.traces == 0) r.first_start = r.last_start = start_of(b, i);
          r.last_start = start_of(b, i);
          r.min = r.traces == 0 ? duration_of(i) : std::min(r.min, duration_of(i));
          r.max = std::max(r.max, duration_of(i));
          sum += static_cast<double>(duration_of(i));
          for (int c = 0; c < children_of(s); ++c) {
            r.child_mean[static_cast<size_t>(c)] += static_cast<double>(child_duration_of(c, i));
          }
          if (fails(i)) ++r.failed;
          ++r.traces;
        }
        if (r.traces == 0) continue;
        r.mean = sum / static_cast<double>(r.traces);
        for (double& m : r.child_mean) m /= static_cast<double>(r.traces);
        out.push_back(r);
      }
    }
    return out;
  }
};

}  // namespace sonde::store::test
