// Demonstrates automatic instrumentation: this program contains no sonde
// code. It is compiled with -finstrument-functions and either preloaded with
// libsonde (example_autoinst: `sonde run -- example_autoinst`) or linked with
// it (example_autoinst_linked: monitored by just running it). It covers a
// static function, a function in an anonymous namespace, member functions,
// recursion, and calls into an instrumented shared library
// (libautoinst_shapes.so). With gcc, standard-library code is not
// instrumented (-finstrument-functions-exclude-file-list=/usr/include).
//
//   example_autoinst [shapes=6] [depth=8]
//
// Call counts (N shapes, D depth): main 1; scale N; Inventory::add N;
// shapes::make N; Inventory::total 1; shapes::total_area 1; Circle::area
// ceil(N/2); Square::area floor(N/2); count_down D+1; report 1; plus the
// shapes' constructors and destructors and Inventory's destructor.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "shapes.hpp"

// Internal linkage: only the executable's own symbol table names it.
static double scale(int i) { return 1.0 + i % 4; }

namespace {

void report(int count, double area, int levels) {
  std::printf("autoinst: %d shapes, total area %.2f, %d levels\n", count, area, levels);
}

}  // namespace

class Inventory {
 public:
  void add(std::unique_ptr<shapes::Shape> shape) { all_.push_back(std::move(shape)); }
  double total() const { return shapes::total_area(all_); }

 private:
  std::vector<std::unique_ptr<shapes::Shape>> all_;
};

// Not inlined, so that every level is a real, separately recorded call.
[[gnu::noinline]] int count_down(int depth) { return depth == 0 ? 1 : 1 + count_down(depth - 1); }

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 6;
  const int depth = argc > 2 ? std::atoi(argv[2]) : 8;
  Inventory inventory;
  for (int i = 0; i < count; ++i) inventory.add(shapes::make(i % 2, scale(i)));
  const double area = inventory.total();
  const int levels = count_down(depth < 0 ? 0 : depth);
  report(count, area, levels);
  return 0;
}
