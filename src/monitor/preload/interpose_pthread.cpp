// Lock waiting time (probe_lock_wait): pthread_mutex_lock interposed. An
// uncontended lock costs one switch load and a trylock; only when the
// trylock finds the mutex taken does the probe time the blocking lock and,
// if the wait reaches probe_lock_wait_threshold_ns, write a LockWait record
// tied to the waiter's trace position. Locks libc takes internally (its own
// calls, not through the PLT) and statically linked programs are not seen.
#include <errno.h>
#include <link.h>
#include <pthread.h>

#include <algorithm>
#include <cstdint>

#include "monitor/preload/interpose_common.hpp"

namespace sonde::preload {
namespace {

using MutexFn = int (*)(pthread_mutex_t*);
std::atomic<MutexFn> g_real_lock{nullptr};
std::atomic<MutexFn> g_real_trylock{nullptr};

#if defined(__x86_64__) && defined(__GLIBC__)
// glibc's own entry points, bound by version so they can never resolve to
// this library: used if dlsym itself should take a mutex while resolving.
extern "C" int sonde_glibc_mutex_lock(pthread_mutex_t*);
extern "C" int sonde_glibc_mutex_trylock(pthread_mutex_t*);
__asm__(".symver sonde_glibc_mutex_lock, __pthread_mutex_lock@GLIBC_2.2.5");
__asm__(".symver sonde_glibc_mutex_trylock, __pthread_mutex_trylock@GLIBC_2.2.5");
#define SONDE_HAVE_GLIBC_FALLBACK 1
#endif

__thread uint8_t t_resolving __attribute__((tls_model("initial-exec")));

MutexFn resolve(std::atomic<MutexFn>& slot, const char* name, MutexFn self, MutexFn fallback) {
  MutexFn f = slot.load(std::memory_order_acquire);
  if (f != nullptr) [[likely]]
    return f;
  if (t_resolving && fallback != nullptr) return fallback;
  t_resolving = 1;
  f = next_definition(slot, name, self);
  t_resolving = 0;
  return f != nullptr ? f : fallback;
}

}  // namespace
}  // namespace sonde::preload

using namespace sonde::preload;

namespace sonde::preload {
namespace {

MutexFn real_lock() {
#ifdef SONDE_HAVE_GLIBC_FALLBACK
  return resolve(g_real_lock, "pthread_mutex_lock", &::pthread_mutex_lock, &sonde_glibc_mutex_lock);
#else
  return resolve(g_real_lock, "pthread_mutex_lock", &::pthread_mutex_lock, nullptr);
#endif
}

MutexFn real_trylock() {
#ifdef SONDE_HAVE_GLIBC_FALLBACK
  return resolve(g_real_trylock, "pthread_mutex_trylock", MutexFn{nullptr},
                 &sonde_glibc_mutex_trylock);
#else
  return resolve(g_real_trylock, "pthread_mutex_trylock", MutexFn{nullptr}, nullptr);
#endif
}

// libsonde's own code (load address range), whose locks (buffer hand-off,
// thread registration, contended by the writer thread) are the monitor's
// cost, not the program's: they are not recorded. libsonde marks them busy
// too (MonitorLock); the range covers those it takes without marking.
struct CodeRange {
  uintptr_t lo = 0, hi = 0;
};

int find_libsonde_range(dl_phdr_info* info, size_t, void* data) {
  auto* range = static_cast<CodeRange*>(data);
  if (info->dlpi_addr != range->lo) return 0;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  range->lo = lo;
  range->hi = hi;
  return 1;
}

bool inside_libsonde(uintptr_t address) {
  static const CodeRange range = [] {
    CodeRange r;
    Dl_info info{};
    // Any function of libsonde's names its module.
    if (dladdr(reinterpret_cast<void*>(&sonde_internal_longjmp), &info) == 0) return r;
    r.lo = reinterpret_cast<uintptr_t>(info.dli_fbase);
    if (dl_iterate_phdr(find_libsonde_range, &r) == 0) r = CodeRange{};
    return r;
  }();
  return address >= range.lo && address < range.hi;
}

// The contended path, out of line so the common path stays small.
[[gnu::noinline]] int contended_lock(pthread_mutex_t* m, MutexFn lock, uintptr_t caller) {
  ProbeBusy busy;  // locks taken while recording pass straight through
  if (inside_libsonde(caller)) return lock(m);
  int64_t start_epoch = epoch_ns_now();
  int64_t start = monotonic_ns_now();
  int rc = lock(m);
  int64_t waited = monotonic_ns_now() - start;
  bool acquired = rc == 0 || rc == EOWNERDEAD;
  if (acquired &&
      static_cast<uint64_t>(waited) >=
          g_probe_switches.lock_wait_threshold_ns.load(std::memory_order_relaxed) &&
      diagnostics_accepting()) {
    DiagnosticRecord r;
    r.kind = DiagnosticKind::kLockWait;
    r.timestamp = start_epoch;
    r.position = current_trace_position();
    r.value0 = waited;
    r.value1 = -1;  // hold time is not measured
    r.address = reinterpret_cast<uint64_t>(m);
    emit_diagnostic(r);
  }
  return rc;
}

}  // namespace
}  // namespace sonde::preload

SONDE_INTERPOSE int pthread_mutex_lock(pthread_mutex_t* m) {
  MutexFn lock = real_lock();
  if (lock == nullptr)
    return EINVAL;  // no pthread_mutex_lock after this library: cannot happen with glibc
  if (g_probe_switches.lock_wait.load(std::memory_order_relaxed) == 0 || t_probe_busy) {
    return lock(m);
  }
  MutexFn trylock = real_trylock();
  if (trylock == nullptr) return lock(m);
  // Same result as lock() for every mutex type except a wait: EBUSY.
  int rc = trylock(m);
  if (rc != EBUSY) [[likely]]
    return rc;
  return contended_lock(m, lock, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}
