// longjmp, _longjmp, siglongjmp and __longjmp_chk (what _FORTIFY_SOURCE
// builds call) interposed: the frames a jump skips never run their exit
// probes, so libsonde is told before the jump (sonde_internal_longjmp) and
// drops them at the thread's next probe. Then the real function jumps.
//
// siglongjmp often leaves a signal handler, where dlsym must not run: the
// real functions are resolved when the library is loaded.

#include <cstdlib>

#include "monitor/preload/interpose_common.hpp"

namespace {

// The jmp_buf is passed through untouched, so its type does not matter.
using JumpFn = void (*)(void*, int);

enum Jump { kLongjmp, kUnderscoreLongjmp, kSiglongjmp, kLongjmpChk, kJumps };
constexpr const char* kNames[kJumps] = {"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"};
constinit sonde::preload::LoadTimeFunctions<JumpFn, kJumps> g_real(kNames);

[[gnu::constructor]] void resolve_all() { g_real.resolve_all(); }

[[noreturn]] void jump(Jump which, void* env, int value) {
  sonde_internal_longjmp();
  JumpFn real = g_real.get(which);
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
