// Built with -O2 -finstrument-functions and no file excluded: std::string's
// size() is inlined into measure(), and (built as C++17) its hook calls name libstdc++'s
// exported copy (an extern template), a function of a module that is not
// instrumented and never calls a hook itself (patterns_test's end-to-end
// part: a pattern must still exclude it by name).
//   test_inlined_library CALLS   -> "total=CALLS*5" on stderr
#include <cstdio>
#include <cstdlib>
#include <string>

[[gnu::noinline]] size_t measure(const std::string& s) { return s.size(); }

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 1000;
  std::string s("hello");
  size_t total = 0;
  for (int i = 0; i < calls; ++i) total += measure(s);
  std::fprintf(stderr, "total=%zu\n", total);
  return 0;
}
