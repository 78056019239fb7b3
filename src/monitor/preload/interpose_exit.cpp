// _exit and _Exit interposed: they end the process without running atexit,
// where libsonde closes its log. A forking server's child typically ends
// with _exit, so its last buffers were never written and its log had no END
// item. libsonde is asked to write everything and close the log first
// (bounded by crash_flush_timeout_ms; nothing in a vfork child, which
// shares its parent's memory), then the real function ends the process.
//
// _exit is async-signal-safe and often called from signal handlers, where
// dlsym must not run: the real functions are resolved when the library is
// loaded. glibc's exit() reaches _exit internally, not through this symbol.
#include <sys/syscall.h>
#include <unistd.h>

#include "monitor/preload/interpose_common.hpp"

namespace {

using ExitFn = void (*)(int);

enum Exit { kUnderscoreExit, kCapitalExit, kExits };
constexpr const char* kNames[kExits] = {"_exit", "_Exit"};
constinit sonde::preload::LoadTimeFunctions<ExitFn, kExits> g_real(kNames);

[[gnu::constructor]] void resolve_all() { g_real.resolve_all(); }

[[noreturn]] void end_process(Exit which, int status) {
  sonde_internal_before_immediate_exit();
  if (ExitFn real = g_real.get(which); real != nullptr) real(status);
  for (;;) syscall(SYS_exit_group, status);  // what _exit does, should dlsym find none
}

}  // namespace

SONDE_INTERPOSE [[noreturn]] void _exit(int status) { end_process(kUnderscoreExit, status); }
SONDE_INTERPOSE [[noreturn]] void _Exit(int status) { end_process(kCapitalExit, status); }
