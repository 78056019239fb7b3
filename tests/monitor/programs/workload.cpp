// Test workload with manual probes and exactly predictable event counts:
//   workload THREADS ITERATIONS DEPTH [throw|crash|abort|fork|context]
// Each iteration calls recurse(DEPTH) (DEPTH+1 nested operations) and
// leaf() once; "throw" adds one failing operation per thread; "crash" and
// "abort" die after the work; "fork" repeats the work in a child process;
// "context" hands each worker's trace context to a helper thread;
// "traceparent" does so through a W3C traceparent string; "remote" hands
// a traceparent to a second process ("serve TRACEPARENT", this program
// again), as an RPC would; "reload" rewrites SONDE_PATTERNS_FILE half-way
// to exclude shop.leaf; "pause" does the work, sleeps 1.5 s and does it
// again (a run that lasts, for the samplers); "churn" runs THREADS short-lived threads, eight at
// a time, each doing the work once.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sonde/sonde.hpp"

namespace shop {

[[gnu::noinline]] int leaf(int x) {
  SONDE_SCOPE_NAMED("shop.leaf");
  return x + 1;
}

[[gnu::noinline]] int recurse(int depth) {
  SONDE_SCOPE_NAMED("shop.recurse");
  if (depth == 0) return 0;
  return recurse(depth - 1) + 1;
}

[[gnu::noinline]] void fail_once() {
  SONDE_SCOPE_NAMED("shop.fail");
  throw std::runtime_error("out of stock");
}

// The exception is thrown inside libstdc++ (std::vector::at), not here.
[[gnu::noinline]] int library_throw() {
  SONDE_SCOPE_NAMED("shop.at");
  std::vector<int> empty;
  return empty.at(3);
}

}  // namespace shop

static void work(int iterations, int depth, bool with_throw) {
  volatile unsigned sink = 0;
  for (int i = 0; i < iterations; ++i) {
    sink = sink + static_cast<unsigned>(shop::recurse(depth));
    sink = sink + static_cast<unsigned>(shop::leaf(i));
  }
  if (with_throw) {
    try {
      shop::fail_once();
    } catch (const std::exception&) {
    }
  }
}

// Carries the context through a W3C traceparent string, as across processes.
static void traceparent_work() {
  SONDE_SCOPE_NAMED("shop.client");
  sonde_context ctx = sonde_context_capture();
  char header[64];
  if (sonde_context_inject(&ctx, header, sizeof header) != 0) std::exit(4);
  std::printf("traceparent %s\n", header);
  std::string copy = header;
  std::thread server([copy] {
    sonde_context remote{};
    if (sonde_context_extract(copy.c_str(), &remote) != 0) std::exit(5);
    sonde_context_continue(&remote);
    SONDE_SCOPE_NAMED("shop.server");
  });
  server.join();
}

// Calls this program in "serve" mode, as a server in another process,
// with a traceparent for the calling thread's current position.
static void call_server_process() {
  const sonde_context ctx = sonde_context_capture();
  char header[64];
  if (sonde_context_inject(&ctx, header, sizeof header) != 0) std::exit(4);
  char self[] = "/proc/self/exe";
  char threads[] = "1", zero[] = "0", serve[] = "serve";
  char* child_argv[] = {self, threads, zero, zero, serve, header, nullptr};
  pid_t child = 0;
  // posix_spawn: a fresh process, as a server would be, with this environment.
  if (posix_spawn(&child, self, nullptr, nullptr, child_argv, environ) != 0) std::exit(7);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::exit(8);
}

// The client side of a cross-process call. Sent after a callee returned,
// so that the sender's position (its last event, the callee's exit) is not
// the sending execution's enter.
static void remote_work() {
  SONDE_SCOPE_NAMED("shop.client");
  shop::leaf(0);
  call_server_process();
}

// A cross-process call sent from a part that continued a context: the
// client hands its context to a relay thread, which calls the other
// process (a traceparent whose parent-id is a continued part's span id).
static void relay_work() {
  SONDE_SCOPE_NAMED("shop.client");
  const sonde_context ctx = sonde_context_capture();
  std::thread relay([ctx] {
    sonde_context_continue(&ctx);
    SONDE_SCOPE_NAMED("shop.relay");
    shop::leaf(0);
    call_server_process();
  });
  relay.join();
}

// The server side: continues the trace named by the traceparent.
static void serve_work(const std::string& traceparent) {
  sonde_context remote{};
  if (sonde_context_extract(traceparent.c_str(), &remote) != 0) std::exit(5);
  sonde_context_continue(&remote);
  SONDE_SCOPE_NAMED("shop.server");
  shop::leaf(1);
}

// Says on stderr what the calling thread would send: "WHO sends 00-...".
static void say_what_is_sent(const char* who) {
  const sonde_context here = sonde_context_capture();
  char header[64];
  if (sonde_context_inject(&here, header, sizeof header) != 0) std::exit(4);
  std::fprintf(stderr, "%s sends %s\n", who, header);
}

// A server called by a tracer other than sonde: continues the traceparent
// it was given, calls a callee, then says what it would send on; hands its
// context to a worker thread, which does the same.
static void foreign_work(const std::string& traceparent) {
  sonde_context caller{};
  if (sonde_context_extract(traceparent.c_str(), &caller) != 0) std::exit(5);
  sonde_context_continue(&caller);
  SONDE_SCOPE_NAMED("shop.server");
  shop::leaf(1);
  say_what_is_sent("server");
  const sonde_context here = sonde_context_capture();
  std::thread worker([here] {
    sonde_context_continue(&here);
    SONDE_SCOPE_NAMED("shop.worker");
    shop::leaf(2);
    say_what_is_sent("worker");
  });
  worker.join();
}

// Excludes shop.leaf through the patterns file half-way, without restart.
static void reload_work(int iterations) {
  const char* file = std::getenv("SONDE_PATTERNS_FILE");
  if (file == nullptr) std::exit(6);
  work(iterations, 0, false);
  if (FILE* f = std::fopen(file, "w")) {
    std::fputs("# written by the workload\n-shop.leaf\n", f);
    std::fclose(f);
  }
  usleep(1500 * 1000);  // several reload periods
  work(iterations, 0, false);
}

static void context_work() {
  SONDE_SCOPE_NAMED("shop.parent");
  auto ctx = sonde::Context::capture();
  std::thread helper([ctx] {
    ctx.continue_here();
    shop::leaf(1);
  });
  helper.join();
}

// A real invalid store, kept out of UBSan's reach so that the sanitizer
// build still crashes with SIGSEGV (the crash tests check libsonde's flush).
// Both volatile: the compiler can neither see the null (and treat the call
// as unreachable) nor drop the store.
__attribute__((no_sanitize("undefined"), noinline)) static void crash_now() {
  volatile int* volatile null_pointer = nullptr;
  *null_pointer = 42;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(
        stderr,
        "usage: workload THREADS ITERATIONS DEPTH "
        "[throw|crash|abort|fork|context|traceparent|remote|relay|serve TRACEPARENT|foreign "
        "TRACEPARENT]\n");
    return 2;
  }
  int threads = std::atoi(argv[1]);
  int iterations = std::atoi(argv[2]);
  int depth = std::atoi(argv[3]);
  std::string mode = argc > 4 ? argv[4] : "";
  if (mode == "churn") {
    for (int started = 0; started < threads;) {
      std::vector<std::thread> wave;
      for (int i = 0; i < 8 && started < threads; ++i, ++started)
        wave.emplace_back([&] { work(iterations, depth, false); });
      for (auto& t : wave) t.join();
    }
    return 0;
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      if (mode == "context") {
        context_work();
      } else if (mode == "traceparent") {
        traceparent_work();
      } else if (mode == "remote") {
        remote_work();
      } else if (mode == "relay") {
        relay_work();
      } else if (mode == "serve") {
        serve_work(argc > 5 ? argv[5] : "");
      } else if (mode == "foreign") {
        foreign_work(argc > 5 ? argv[5] : "");
      } else if (mode == "reload") {
        reload_work(iterations);
      } else if (mode == "pause") {
        work(iterations, depth, false);
        usleep(1500 * 1000);
        work(iterations, depth, false);
      } else {
        work(iterations, depth, mode == "throw");
      }
    });
  }
  for (auto& t : pool) t.join();
  if (mode == "fork") {
    pid_t child = fork();
    if (child == 0) {
      work(iterations, depth, false);
      std::exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 3;
  }
  if (mode == "stdthrow") {
    try {
      shop::library_throw();
    } catch (const std::out_of_range&) {
    }
  }
  if (mode == "crash") crash_now();
  if (mode == "abort") std::abort();
  return 0;
}
