// Which library the interposed functions bind to, and what the program gets
// from it (preload_split_test, docs/probes.md). Built twice: linked with
// libsonde only (test_split_libsonde) and with libsonde-preload ahead of it
// (test_split_preload).
//   test_split_* bindings   prints "binding <symbol> <file>" to stderr for each
//                           function libsonde-preload interposes
//   test_split_* work       one contended pthread_mutex_lock (scope
//                           split.wait), one sqlite3_exec (split.query), and
//                           exceptions leaving the scopes split.throw (`throw`),
//                           split.rethrow (`throw;`) and split.rethrow_exception
//                           (std::rethrow_exception of a worker's exception);
//                           then longjmp and siglongjmp (out of a signal
//                           handler) on a thread outside any scope.
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#include "sonde/sonde.hpp"

namespace {

const char* const kInterposed[] = {"pthread_mutex_lock",
                                   "sqlite3_step",
                                   "sqlite3_reset",
                                   "sqlite3_finalize",
                                   "sqlite3_exec",
                                   "__cxa_throw",
                                   "__cxa_rethrow",
                                   "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE",
                                   "dlclose",
                                   "longjmp",
                                   "_longjmp",
                                   "siglongjmp",
                                   "__longjmp_chk",
                                   "_exit",
                                   "_Exit"};

int print_bindings() {
  for (const char* name : kInterposed) {
    void* bound = dlsym(RTLD_DEFAULT, name);
    Dl_info info{};
    const char* file = bound != nullptr && dladdr(bound, &info) != 0 && info.dli_fname != nullptr
                           ? info.dli_fname
                           : "none";
    std::fprintf(stderr, "binding %s %s\n", name, file);
  }
  return 0;
}

// The waiter blocks in the kernel before the holder lets go (glibc marks a
// mutex with sleeping waiters by __lock == 2): exactly one contended wait.
void contended_wait() {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  std::atomic<bool> held{false};
  pthread_mutex_lock(&mutex);
  std::thread waiter([&] {
    held.wait(false);
    SONDE_SCOPE_NAMED("split.wait");
    pthread_mutex_lock(&mutex);
    pthread_mutex_unlock(&mutex);
  });
  held = true;
  held.notify_one();
  while (__atomic_load_n(&mutex.__data.__lock, __ATOMIC_ACQUIRE) != 2) sched_yield();
  pthread_mutex_unlock(&mutex);
  waiter.join();
}

bool query() {
  SONDE_SCOPE_NAMED("split.query");
  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return false;
  bool ok = sqlite3_exec(db, "SELECT 1", nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(db);
  return ok;
}

void throws() {
  try {
    SONDE_SCOPE_NAMED("split.throw");
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
}

// The scope begins after the original throw and another one since: its
// cause must be the exception being rethrown, not the last one thrown.
void rethrows() {
  try {
    throw std::logic_error("again");
  } catch (const std::logic_error&) {
    try {
      throw std::out_of_range("unrelated");
    } catch (const std::out_of_range&) {
    }
    try {
      SONDE_SCOPE_NAMED("split.rethrow");
      throw;
    } catch (const std::logic_error&) {
    }
  }
}

void rethrows_from_another_thread() {
  std::exception_ptr carried;
  std::thread worker([&carried] {
    try {
      throw std::runtime_error("from worker");
    } catch (...) {
      carried = std::current_exception();
    }
  });
  worker.join();
  // Noted last on this thread, so a cause taken from the thread's last
  // throw would name it instead.
  try {
    throw std::invalid_argument("unrelated");
  } catch (const std::invalid_argument&) {
  }
  try {
    SONDE_SCOPE_NAMED("split.rethrow_exception");
    std::rethrow_exception(carried);
  } catch (const std::runtime_error&) {
  }
}

jmp_buf g_jump;
sigjmp_buf g_signal_jump;

void jump_out_of_handler(int) { siglongjmp(g_signal_jump, 2); }

// The jumps work through the interposers (outside any scope: nothing to
// drop). Returns the number of jumps that landed.
int jumps() {
  int landed = 0;
  std::thread([&landed] {
    volatile int round = 0;
    if (setjmp(g_jump) == 0) {
      round = 1;
      longjmp(g_jump, 1);
    }
    if (round == 1) ++landed;
    signal(SIGUSR1, jump_out_of_handler);
    if (sigsetjmp(g_signal_jump, 1) == 0) {
      raise(SIGUSR1);
      return;  // not reached when the handler jumps
    }
    ++landed;
  }).join();
  return landed;
}

int work() {
  contended_wait();
  if (!query()) {
    std::fprintf(stderr, "sqlite3_exec failed\n");
    return 1;
  }
  throws();
  rethrows();
  rethrows_from_another_thread();
  int landed = jumps();
  if (landed != 2) {
    std::fprintf(stderr, "%d of 2 jumps landed\n", landed);
    return 1;
  }
  std::fprintf(stderr, "work done\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "bindings") return print_bindings();
  if (mode == "work") return work();
  std::fprintf(stderr, "usage: %s bindings|work\n", argv[0]);
  return 2;
}
