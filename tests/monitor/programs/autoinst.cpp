// Built with -finstrument-functions and without sonde: monitored only via
// LD_PRELOAD. Calls a static function, a method, recursion and a function in
// a shared library, ITERATIONS times.
#include <cstdlib>

extern "C" int shapes_area(int w, int h);

namespace geometry {
struct Square {
  [[gnu::noinline]] int area(int side) const { return shapes_area(side, side); }
};
}  // namespace geometry

[[gnu::noinline]] static int twice(int x) { return x * 2; }

[[gnu::noinline]] int countdown(int n) { return n == 0 ? 0 : countdown(n - 1) + 1; }

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 10;
  volatile int sink = 0;
  geometry::Square sq;
  for (int i = 0; i < iterations; ++i) {
    sink = sink + twice(i) + sq.area(i) + countdown(2);
  }
  return 0;
}
