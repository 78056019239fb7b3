// Demonstrates monitoring a program that dies: N probed calls, then a crash
// inside probed calls that are still open, so that libsonde's crash handler
// must flush what was recorded. Crashes by dereferencing a null pointer
// (SIGSEGV) or, given "abort", by calling abort() (SIGABRT).
//
//   example_crash [calls=100] [segv|abort]
//
// Call counts: Worker::step N, Worker::explode 1 (never returns).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sonde/sonde.hpp>

namespace {

class Worker {
 public:
  long step(int i) {
    SONDE_SCOPE();
    total_ += i % 13;
    return total_;
  }

  // UBSan would report the null store itself; the point is a real SIGSEGV.
  [[noreturn, gnu::no_sanitize("undefined")]] void explode(bool use_abort) {
    SONDE_SCOPE();
    std::printf("crash: %ld after the steps, now crashing with %s\n", total_,
                use_abort ? "abort()" : "a null pointer");
    std::fflush(stdout);
    if (use_abort) std::abort();
    // Both volatile: the compiler can neither see the null (and turn the
    // store into a trap, SIGILL) nor drop the store as dead before abort().
    volatile int* volatile pointer = nullptr;
    *pointer = 42;
    std::abort();  // not reached
  }

 private:
  long total_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 100;
  const bool use_abort = argc > 2 && std::strcmp(argv[2], "abort") == 0;
  Worker worker;
  for (int i = 0; i < calls; ++i) worker.step(i);
  worker.explode(use_abort);
}
