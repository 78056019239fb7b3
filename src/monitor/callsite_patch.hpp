// Zero-cost exclusion for -finstrument-functions programs: the hook calls
// of an excluded function are overwritten with NOPs, as XRay unpatches its
// sleds. An excluded function otherwise still pays two hook calls and a
// table lookup per call (~4-5 ns, against ~1 ns for glibc's empty hooks),
// which for tiny helpers called millions of times a second is most of the
// overhead culling is meant to remove (docs/cull.md).
//
// The hooks only say where they were called from; the writer thread
// verifies that the bytes there are a call to a hook and replaces the call
// with one atomic store, keeping the original bytes so that a pattern
// change that monitors the function again can put them back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sonde::monitor {

// Called by the -finstrument-functions hooks when the filter excludes `fn`;
// `return_address` is __builtin_return_address(0) inside the hook, i.e.
// just after the call instruction. Async-signal-safe, lock-free,
// allocation-free; a site already requested costs one hash and one load.
void request_callsite_patch(uint64_t fn, uint64_t return_address);

// Writer thread: applies queued patches (verifies the bytes, mprotect,
// atomic store), and undoes patches of functions a new filter monitors
// again (pattern reload). Returns the number of sites patched.
size_t apply_callsite_patches();

// Publishes a new function filter (`publish` stores it) after putting back
// the exit hook calls of the functions it monitors again, and with the
// patcher held meanwhile, so that no exit site is patched out between the
// two. A function's enter call that could not be patched (about 1 in 16
// sites) keeps calling the hook while the function is excluded, and records
// as soon as the filter allows it; with its exits still NOPs that frame
// never closed, and every later call on that thread nested under it (the
// shop's request handler in run shop-full-3: one 10-s trace per test).
// Any thread. If the patcher stays busy for 100 ms (a caller holding the
// loader's lock while the writer waits for it), it publishes without.
struct FunctionFilter;
void publish_filter_after_exit_restore(const FunctionFilter* next, void (*publish)(void*),
                                       void* arg);

struct CallsiteStats {
  uint64_t requested = 0;           // distinct call sites the hooks asked to patch
  uint64_t patched = 0;             // sites made NOPs (enter and exit hooks)
  uint64_t patched_exits = 0;       // of which exit hooks (a function's tail exits count once)
  uint64_t patched_tail_jumps = 0;  // tail jumps to the exit hook made `ret` (tail_exits.hpp)
  uint64_t shared = 0;       // hook calls (or tail jumps) left alone: their function argument
                             // is not provably the requesting function's (hook_argument.hpp)
  uint64_t redirected = 0;   // of `patched`: calls sent to a `ret` (StoreKind::kRedirect)
  uint64_t restored = 0;     // patches undone because the function is monitored again
  uint64_t unpatchable = 0;  // sites no single atomic store can replace (left calling the hook)
  uint64_t rejected = 0;     // sites whose bytes were not a recognised call to a hook
  bool table_full = false;   // some requests were dropped: the site table was full
  bool disabled = false;     // patch_call_sites = false, or making code writable failed
  bool mprotect_failed = false;
};
// The stats as the exit summary's line: "call sites patched: N (...)".
std::string callsite_patch_summary();
CallsiteStats callsite_patch_stats();

// Culling (cull.cpp): whether the function at `fn`, `size` bytes long (its
// symbol's), is a straight-line leaf (leaf_code.hpp), its calls to the
// hooks recognised as the patcher recognises them (directly, through a PLT
// stub or a GOT slot). Read under the loader's lock. Any thread.
// Writer thread. A verdict with `retry` set says nothing (the patcher was
// busy, or prepare_code_classification has not run): ask again later.
struct LeafVerdict;
LeafVerdict classify_function_code(uint64_t fn, uint64_t size, uint32_t max_instructions);
// Reads the hooks' addresses (dlsym, which takes the loader's lock): the
// writer thread calls it once, holding no lock of its own, before
// anything is classified.
void prepare_code_classification();

}  // namespace sonde::monitor
