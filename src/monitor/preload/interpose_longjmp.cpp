// longjmp, _longjmp, siglongjmp and __longjmp_chk (what _FORTIFY_SOURCE
// builds call) interposed: the frames a jump skips never run their exit
// probes, so libsonde is told before the jump (sonde_internal_longjmp) and
// drops them at the thread's next probe. Then the real function jumps.
//
// siglongjmp often leaves a signal handler, where dlsym must not run: the
// real functions are resolved when the library is loaded.
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>

#include "monitor/preload/interpose_common.hpp"

namespace {

// The jmp_buf is passed through untouched, so its type does not matter.
using JumpFn = void (*)(void*, int);

enum Jump { kLongjmp, kUnderscoreLongjmp, kSiglongjmp, kLongjmpChk, kJumps };
constexpr const char* kNames[kJumps] = {"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"};
std::atomic<JumpFn> g_real[kJumps];

JumpFn resolve(Jump which) {
  JumpFn f = g_real[which].load(std::memory_order_acquire);
  if (f == nullptr) {
    // Only before the constructor below ran (a jump in another library's
    // constructor); dlsym is safe there.
    f = reinterpret_cast<JumpFn>(dlsym(RTLD_NEXT, kNames[which]));
    g_real[which].store(f, std::memory_order_release);
  }
  return f;
}

[[gnu::constructor]] void resolve_all() {
  for (int i = 0; i < kJumps; ++i) resolve(static_cast<Jump>(i));
}

[[noreturn]] void jump(Jump which, void* env, int value) {
  sonde_internal_longjmp();
  JumpFn real = resolve(which);
  if (real == nullptr) std::abort();  // no such function after this library
  real(env, value);
  __builtin_unreachable();
}

}  // namespace

SONDE_INTERPOSE [[noreturn]] void longjmp(void* env, int value) { jump(kLongjmp, env, value); }
SONDE_INTERPOSE [[noreturn]] void _longjmp(void* env, int value) {
  jump(kUnderscoreLongjmp, env, value);
}
SONDE_INTERPOSE [[noreturn]] void siglongjmp(void* env, int value) {
  jump(kSiglongjmp, env, value);
}
SONDE_INTERPOSE [[noreturn]] void __longjmp_chk(void* env, int value) {
  jump(kLongjmpChk, env, value);
}
