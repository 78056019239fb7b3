// Call-site patching (callsite_patch.hpp). The hooks record sites in a
// fixed, lock-free hash table; the writer thread does everything else.
//
// Thread safety of the patch itself: the call is replaced by a single
// atomic store of an aligned 8- or 16-byte block (or a 2-byte jump inside
// one aligned word), so a thread executing the site sees either the whole
// call or the whole NOP, never a mix; one that already decoded the call
// still makes it, and the hooks treat that like any call of an excluded
// function. A thread inside a hook returns to the return address, which is
// still the end of the instruction. After each batch, membarrier's
// SYNC_CORE makes every thread serialise its instruction stream, as
// cross-modifying code asks for. The bytes around the call (the argument
// set-up) stay; they only fill two registers the hook would have clobbered.
//
// Exit hooks: a function excluded while a thread is inside it recorded its
// enter; if its exit call were patched before that thread reaches it, the
// frame would stay open (the probe closes it later as "left without exit",
// which is balanced but reads as a failure). So exit sites are patched only
// after a grace period since the filter changed (100 ms after a pattern
// change, 10 ms after culling, whose functions are short; none for the
// filter start-up sets, before anything is recorded), by which time such
// frames have returned.
//
// Why one file this long: the request table, the writer's patch list and
// the passes over them share invariants (a slot's state and its Patch
// change together, under the writer's busy flag, and the classifier reads
// the patch list under the same flag) that nothing else may touch. What
// needs none of that state lives apart: the code stores, the writable
// window and the objects' segments (code_memory.cpp), the instruction
// forms (callsite_code.hpp), tail jumps (tail_exits.cpp), the hook-argument
// analysis (hook_argument.cpp). Split further, this file's state (the
// site table, batches inside one writable window, tail exits, restores,
// and the leaf classification that shares the object walk) would become
// an internal header's API.
#include "monitor/callsite_patch.hpp"

#include <dlfcn.h>
#include <link.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "monitor/callsite_code.hpp"
#include "monitor/clock.hpp"
#include "monitor/code_memory.hpp"
#include "monitor/controller.hpp"
#include "monitor/function_filter.hpp"
#include "monitor/hook_argument.hpp"
#include "monitor/leaf_code.hpp"
#include "monitor/symbolizer.hpp"
#include "monitor/tail_exits.hpp"

extern "C" void __cyg_profile_func_enter(void* fn, void* site);
extern "C" void __cyg_profile_func_exit(void* fn, void* site);

namespace sonde::monitor {
namespace {

using namespace callsite;

// ---------------------------------------------------------------------------
// The request table, shared by the hooks (insert) and the writer (scan).

enum SlotState : uint32_t {
  kEmpty = 0,        // or claimed and not yet filled in
  kRequested = 1,    // the hook asked; the writer has not decided yet
  kPatched = 2,      // the call is a NOP now
  kUnpatchable = 3,  // no atomic store can replace it: left as it is
  kRejected = 4,     // not a recognised hook call (or its code is gone)
  kMonitored = 5,    // its function is monitored (again): a new request re-arms it
  kCovered = 6,      // a tail exit whose function's tail jumps another site's patch made `ret`
  kShared = 7,       // a hook call whose function argument is not provably its function's own
};

struct Slot {
  std::atomic<uint64_t> site{0};  // the return address: never changes once set
  std::atomic<uint64_t> fn{0};
  std::atomic<uint32_t> state{kEmpty};
};

constexpr size_t kSlots = size_t{1} << 16;  // zero pages until used
constexpr size_t kMaxProbe = 64;
Slot g_slots[kSlots];
std::atomic<uint64_t> g_requests{0};  // bumped after every request the writer must see
std::atomic<bool> g_off{false};       // patching is off: hooks return at once
std::atomic<bool> g_table_full{false};

// Counters for the summary (read from any thread).
std::atomic<uint64_t> g_requested{0};
std::atomic<uint64_t> g_patched{0};
std::atomic<uint64_t> g_patched_exits{0};
std::atomic<uint64_t> g_patched_tails{0};
std::atomic<uint64_t> g_redirected{0};
std::atomic<uint64_t> g_shared{0};
std::atomic<uint64_t> g_restored{0};
std::atomic<uint64_t> g_unpatchable{0};
std::atomic<uint64_t> g_rejected{0};
std::atomic<bool> g_mprotect_failed{false};

inline size_t slot_hash(uint64_t site) {
  return static_cast<size_t>((site * 0x9E3779B97F4A7C15ULL) >> 40);
}

// The slot that holds `site`, or kSlots if none does.
size_t slot_of(uint64_t site) {
  const size_t h = slot_hash(site);
  for (size_t probe = 0; probe < kMaxProbe; ++probe) {
    const size_t i = (h + probe) & (kSlots - 1);
    const uint64_t held = g_slots[i].site.load(std::memory_order_acquire);
    if (held == site) return i;
    if (held == 0) break;
  }
  return kSlots;
}

// ---------------------------------------------------------------------------
// The writer's side.

struct Patch {
  uint64_t start = 0;
  uint32_t length = 0;
  StoreKind kind = StoreKind::kNone;
  uint8_t original[6] = {};
  uint8_t written[6] = {};
  uint32_t count = 0;  // bytes written (length, or 2 for the short jump)
  std::string object;  // the module it lies in and its base: a restore checks both
  uint64_t base = 0;
  bool exit_hook = false;  // restored before the enter hooks (apply_callsite_patches)
  // A tail exit (tail_exits.hpp): the site is a caller's return address;
  // what was patched is every `jmp` to the exit hook in function `fn`, each
  // one's first byte now `ret` (length 0 above: nothing at `start`).
  struct TailJumpPatch {
    uint64_t address;
    uint8_t original;
  };
  std::vector<TailJumpPatch> tails;
  uint64_t fn = 0;
};

struct Work {
  size_t slot = 0;
  uint64_t site = 0;
  bool restore = false;
  bool done = false;          // found in a loaded object and handled
  bool exit_restore = false;  // restores an exit hook's call: in the first pass
};

struct Writer {
  // One caller at a time (the writer thread; a second one just returns). A
  // flag rather than a mutex: a child forked while it was set resets it.
  std::atomic<bool> busy{false};
  bool initialised = false;
  uint64_t hooks[4] = {};  // enter, enter, exit, exit (two ways of finding each)
  const FunctionFilter* last_filter = nullptr;
  uint64_t seen_requests = 0;
  bool deferred = false;                        // exit sites waiting for their grace period
  std::unordered_map<uint64_t, Patch> patches;  // by site (return address)
  // Tail exits: the site whose patch holds each function's tail jumps, and
  // the functions found to have none (not decoded again).
  std::unordered_map<uint64_t, uint64_t> tail_owner;
  std::unordered_set<uint64_t> no_tail_jumps;
  std::unique_ptr<Symbolizer> symbols;  // function sizes, for decoding
  long page_size = 4096;
  bool sync_core = false;  // membarrier SYNC_CORE registered
  WritableWindow window;   // open only during a pass over one object
  // A page holding one `ret` near each object whose calls were redirected
  // (StoreKind::kRedirect), by the object's name and base; 0: none could be
  // placed within a rel32's reach. Never unmapped: a thread may still be
  // about to return from it.
  RetPages ret_pages;
  // Decoded functions that contain hook calls (hook_argument.hpp), by
  // object and start; dropped whole when they hold too many instructions.
  std::map<std::tuple<std::string, uint64_t, uint64_t>, std::unique_ptr<FunctionCode>> code;
  size_t code_bytes = 0;
};

Writer& writer() {
  static Writer* w = new Writer;  // never destroyed: the writer may run during exit
  return *w;
}

// The hooks as the program's calls reach them: the global definition
// (libsonde's, preloaded or linked ahead of glibc's empty ones).
void read_hook_addresses(Writer& w) {
  w.hooks[0] = reinterpret_cast<uint64_t>(&__cyg_profile_func_enter);
  w.hooks[1] = reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "__cyg_profile_func_enter"));
  w.hooks[2] = reinterpret_cast<uint64_t>(&__cyg_profile_func_exit);
  w.hooks[3] = reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "__cyg_profile_func_exit"));
}

void initialise(Writer& w) {
  w.initialised = true;
  if (!current_config().patch_call_sites) {
    g_off.store(true, std::memory_order_relaxed);
    return;
  }
  read_hook_addresses(w);
  w.page_size = sysconf(_SC_PAGESIZE);
  // A child forked during a pass: no pass is running there, and no code
  // may stay writable.
  pthread_atfork(nullptr, nullptr, [] {
    close_window(writer().window);
    writer().busy.store(false);
  });
  w.sync_core =
      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0) == 0;
}

bool allowed(const FunctionFilter* filter, uint64_t fn) {
  return filter == nullptr || filter->allows(fn);
}

enum class Hook { kNone, kEnter, kExit };

Hook hook_at(const Writer& w, uint64_t address) {
  if (address == 0) return Hook::kNone;
  if (address == w.hooks[0] || address == w.hooks[1]) return Hook::kEnter;
  if (address == w.hooks[2] || address == w.hooks[3]) return Hook::kExit;
  return Hook::kNone;
}

// The hook a verified call at `ret` reaches, reading only inside `obj`.
Hook verified_hook(const Writer& w, const ObjectView& obj, const HookCall& c) {
  uint64_t slot = 0;
  if (c.form == CallForm::kDirect) {
    if (Hook h = hook_at(w, c.target); h != Hook::kNone) return h;
    // A PLT stub of the same object, jumping through its GOT slot.
    if (obj.code_of(c.target, c.target + 16) == nullptr) return Hook::kNone;
    uint8_t stub[16];
    std::memcpy(stub, reinterpret_cast<const void*>(c.target), sizeof stub);
    slot = plt_slot(stub, c.target);
  } else if (c.form == CallForm::kIndirect) {
    slot = c.target;
  }
  if (slot == 0 || obj.segment_of(slot, slot + 8) == nullptr) return Hook::kNone;
  uint64_t value = __atomic_load_n(reinterpret_cast<const uint64_t*>(slot), __ATOMIC_ACQUIRE);
  return hook_at(w, value);
}

// Runs `apply` with the bytes at `address` (in `seg`) writable
// (open_writable, code_memory.hpp). False (and patching stops for good) if
// even its page is refused.
template <typename Apply>
bool with_writable(Writer& w, const Segment& seg, uint64_t address, Apply&& apply) {
  if (!open_writable(w.window, w.page_size, seg, address)) {
    const int err = errno;
    if (!g_mprotect_failed.exchange(true)) {
      std::fprintf(stderr,
                   "sonde: cannot make code writable to patch excluded functions' hook calls "
                   "(mprotect: %s; a W^X policy?): they keep calling the hooks\n",
                   std::strerror(err));
    }
    g_off.store(true, std::memory_order_relaxed);
    return false;
  }
  apply();
  return true;
}

struct Batch {
  Writer* w;
  std::vector<Work>* work;
  // The filter the pass patches for and the time it started: an excluded
  // function's exit hook calls wait for its grace period (FunctionFilter).
  const FunctionFilter* filter = nullptr;
  int64_t now_ns = 0;
  size_t patched = 0;
  size_t restored = 0;
  bool deferred = false;
  bool exit_restores_only = false;  // the first pass: exit hooks come back first
};

// `size` bytes of code at `start` as compiled: patched calls and tail
// jumps get their original bytes back (a call patched into a 2-byte `jmp
// short` keeps the rest of its bytes, which a linear sweep would read as
// instructions).
std::vector<uint8_t> code_as_compiled(const Writer& w, uint64_t start, uint64_t size) {
  std::vector<uint8_t> bytes(size);
  std::memcpy(bytes.data(), reinterpret_cast<const void*>(start), size);
  const uint64_t end = start + size;
  for (const auto& [site, patch] : w.patches) {
    if (patch.length != 0 && patch.start >= start && patch.start + patch.length <= end)
      std::memcpy(bytes.data() + (patch.start - start), patch.original, patch.length);
    for (const Patch::TailJumpPatch& t : patch.tails) {
      if (t.address >= start && t.address < end) bytes[t.address - start] = t.original;
    }
  }
  return bytes;
}

// Whether the hook call at `call` (in `obj`) passes `fn` alone
// (hook_argument.hpp): only then may patching it out for `fn` leave every
// other function's calls alone.
bool passes_only(Writer& w, const ObjectView& obj, uint64_t call, uint64_t fn) {
  if (fn == 0) return false;
  if (!w.symbols) w.symbols = std::make_unique<Symbolizer>();
  uint64_t start = 0, size = 0;
  if (!w.symbols->function_containing(call, &start, &size)) return false;
  if (obj.code_of(start, start + size) == nullptr) return false;
  auto key = std::make_tuple(std::string(obj.name), obj.base, start);
  auto it = w.code.find(key);
  if (it == w.code.end()) {
    constexpr size_t kMaxCodeBytes = size_t{8} << 20;
    if (w.code_bytes + size > kMaxCodeBytes) {
      w.code.clear();
      w.code_bytes = 0;
    }
    const std::vector<uint8_t> bytes = code_as_compiled(w, start, size);
    it = w.code
             .emplace(key,
                      std::make_unique<FunctionCode>(bytes.data(), size, start, obj.slot_reader()))
             .first;
    w.code_bytes += size;
  }
  return it->second->passes(call, fn);
}

// Whether `fn`'s exit hook calls may be patched out in this pass.
bool exits_due(const Batch& b, uint64_t fn) {
  const int64_t due = b.filter != nullptr ? b.filter->exit_due_ns(fn) : 0;
  return due != 0 && b.now_ns >= due;
}

// Verifies and patches one requested site of `obj`. Returns the new slot
// state, or kRequested to try again later.
uint32_t patch_tail_exits(Batch& b, const ObjectView& obj, uint64_t fn, uint64_t ret);

uint32_t patch_site(Batch& b, const ObjectView& obj, const Segment& seg, uint64_t ret,
                    uint64_t fn) {
  Writer& w = *b.w;
  if (ret < seg.begin + 6) return kRejected;
  uint8_t before[6];
  std::memcpy(before, reinterpret_cast<const void*>(ret - 6), sizeof before);
  HookCall c = decode_call(before, ret);
  Hook hook = c.form == CallForm::kNone ? Hook::kNone : verified_hook(w, obj, c);
  // Not a hook call: the site may be a caller of `fn` whose exit hook call
  // was compiled as a tail jump (tail_exits.hpp).
  if (hook == Hook::kNone) return patch_tail_exits(b, obj, fn, ret);
  if (hook == Hook::kExit && !exits_due(b, fn)) {
    b.deferred = true;
    return kRequested;
  }
  if (!passes_only(w, obj, c.start, fn)) {
    g_shared.fetch_add(1, std::memory_order_relaxed);
    return kShared;
  }
  StoreKind kind = store_kind(c.start, c.length);
  if (kind == StoreKind::kRedirect && c.form != CallForm::kDirect) kind = StoreKind::kNone;
  if (kind == StoreKind::kNone) return kUnpatchable;
  const uint64_t block = store_block(kind, c.start);
  const Segment* code = obj.code_of(block, block + store_size(kind));
  if (code == nullptr || obj.code_of(c.start, c.start + c.length) == nullptr) return kUnpatchable;
  Patch p;
  p.start = c.start;
  p.length = c.length;
  p.kind = kind;
  std::memcpy(p.original, reinterpret_cast<const void*>(c.start), c.length);
  if (kind == StoreKind::kRedirect) {
    const uint64_t ret_at = ret_near(w.ret_pages, w.page_size, obj);
    p.count = ret_at == 0 ? 0 : redirect_bytes(c.start, ret_at, p.written);
    if (p.count == 0) return kUnpatchable;
  } else {
    p.count = patch_bytes(kind, c.length, p.written);
  }
  p.object = obj.name;
  p.base = obj.base;
  bool stored = false;
  if (!with_writable(w, *code, block, [&] { stored = store(kind, p.start, p.written, p.count); })) {
    return kRequested;  // patching is off now; the slot just stays as it was
  }
  if (!stored) return kUnpatchable;
  p.exit_hook = hook == Hook::kExit;
  w.patches[ret] = p;
  ++b.patched;
  if (kind == StoreKind::kRedirect) g_redirected.fetch_add(1, std::memory_order_relaxed);
  if (hook == Hook::kExit) g_patched_exits.fetch_add(1, std::memory_order_relaxed);
  return kPatched;
}

// Makes every jump of `fn` (in `obj`) to the exit hook a `ret`, after the
// grace period for exits. Only a function in the caller's own object: the
// restore finds a patch through its site's object. Returns the site's state.
uint32_t patch_tail_exits(Batch& b, const ObjectView& obj, uint64_t fn, uint64_t ret) {
  Writer& w = *b.w;
  if (fn == 0 || w.no_tail_jumps.contains(fn)) return kRejected;
  if (w.tail_owner.contains(fn)) return kCovered;
  if (!exits_due(b, fn)) {
    b.deferred = true;
    return kRequested;
  }
  if (!w.symbols) w.symbols = std::make_unique<Symbolizer>();
  const uint64_t size = w.symbols->function_size(fn);
  const Segment* code = size == 0 ? nullptr : obj.code_of(fn, fn + size);
  if (code == nullptr) {
    w.no_tail_jumps.insert(fn);
    return kRejected;
  }
  const std::vector<uint8_t> bytes = code_as_compiled(w, fn, size);
  const FunctionCode decoded(bytes.data(), size, fn, obj.slot_reader());
  Patch p;
  p.object = obj.name;
  p.base = obj.base;
  p.exit_hook = true;
  p.fn = fn;
  for (const TailJump& j : find_tail_jumps(bytes.data(), size, fn)) {
    HookCall c{j.indirect ? CallForm::kIndirect : CallForm::kDirect, j.address, j.length, j.target};
    if (verified_hook(w, obj, c) != Hook::kExit) continue;
    // An inlined function's exit may jump to the hook from here too, with
    // its own address: only `fn`'s own jumps become `ret`.
    if (!decoded.passes(j.address, fn)) {
      g_shared.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const uint8_t ret_op = 0xc3;
    bool stored = false;
    if (!with_writable(w, *code, j.address,
                       [&] { stored = store(StoreKind::kCas8, j.address, &ret_op, 1); })) {
      break;  // patching is off now
    }
    if (stored) p.tails.push_back({j.address, bytes[j.address - fn]});
  }
  if (p.tails.empty()) {
    w.no_tail_jumps.insert(fn);
    return kRejected;
  }
  g_patched_exits.fetch_add(1, std::memory_order_relaxed);
  g_patched_tails.fetch_add(p.tails.size(), std::memory_order_relaxed);
  w.tail_owner[fn] = ret;
  w.patches[ret] = std::move(p);
  ++b.patched;
  return kPatched;
}

// A tail exit's jumps back, each where it is still the `ret` we wrote.
bool restore_tail_exits(Writer& w, const ObjectView& obj, const Patch& p) {
  bool all = true;
  for (const Patch::TailJumpPatch& t : p.tails) {
    const Segment* code = obj.code_of(t.address, t.address + 1);
    if (code == nullptr || *reinterpret_cast<const uint8_t*>(t.address) != 0xc3) {
      all = false;
      continue;
    }
    bool stored = false;
    with_writable(w, *code, t.address,
                  [&] { stored = store(StoreKind::kCas8, t.address, &t.original, 1); });
    all = all && stored;
  }
  return all;
}

// Puts the original bytes back if they are still what we wrote, in the
// object we wrote them into (it may have been unloaded and replaced).
bool restore_site(Batch& b, const ObjectView& obj, uint64_t ret) {
  Writer& w = *b.w;
  auto it = w.patches.find(ret);
  if (it == w.patches.end()) return false;
  Patch p = it->second;
  w.patches.erase(it);
  if (!p.tails.empty()) w.tail_owner.erase(p.fn);
  if (p.object != obj.name || p.base != obj.base) return false;
  if (!p.tails.empty()) return restore_tail_exits(w, obj, p);
  const uint64_t block = store_block(p.kind, p.start);
  const Segment* code = obj.code_of(block, block + store_size(p.kind));
  if (code == nullptr) return false;
  if (std::memcmp(reinterpret_cast<const void*>(p.start), p.written, p.count) != 0) return false;
  bool stored = false;
  with_writable(w, *code, block, [&] { stored = store(p.kind, p.start, p.original, p.count); });
  return stored;
}

int visit_object(dl_phdr_info* info, size_t /*size*/, void* arg) {
  auto* b = static_cast<Batch*>(arg);
  const ObjectView obj = view_of(info, static_cast<uint64_t>(b->w->page_size));
  for (Work& item : *b->work) {
    if (item.done || g_off.load(std::memory_order_relaxed)) continue;
    if (b->exit_restores_only && !item.exit_restore) continue;
    const Segment* seg = obj.code_of(item.site - 1, item.site);
    if (seg == nullptr) continue;
    item.done = true;
    Slot& slot = g_slots[item.slot];
    if (item.restore) {
      if (restore_site(*b, obj, item.site)) {
        g_restored.fetch_add(1, std::memory_order_relaxed);
        ++b->restored;
      }
      slot.state.store(kMonitored, std::memory_order_release);
      continue;
    }
    uint32_t state = patch_site(*b, obj, *seg, item.site, slot.fn.load(std::memory_order_relaxed));
    if (state == kPatched) g_patched.fetch_add(1, std::memory_order_relaxed);
    if (state == kUnpatchable) g_unpatchable.fetch_add(1, std::memory_order_relaxed);
    if (state == kRejected) g_rejected.fetch_add(1, std::memory_order_relaxed);
    slot.state.store(state, std::memory_order_release);
  }
  close_window(b->w->window);
  return 0;
}

// The first pass of a restore: the exit hook calls among `work` (those
// marked exit_restore) come back, then every core is serialised, before
// any enter call can come back or record.
void restore_exit_sites(Writer& w, std::vector<Work>& work) {
  Batch exits{&w, &work};
  exits.exit_restores_only = true;
  dl_iterate_phdr(visit_object, &exits);
  if (exits.restored != 0 && w.sync_core) {
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0);
  }
}

}  // namespace

void request_callsite_patch(uint64_t fn, uint64_t return_address) {
  if (g_off.load(std::memory_order_relaxed) || return_address == 0) return;
  const size_t h = slot_hash(return_address);
  for (size_t probe = 0; probe < kMaxProbe; ++probe) {
    Slot& s = g_slots[(h + probe) & (kSlots - 1)];
    uint64_t site = s.site.load(std::memory_order_acquire);
    if (site == 0) {
      if (s.site.compare_exchange_strong(site, return_address, std::memory_order_acq_rel,
                                         std::memory_order_acquire)) {
        s.fn.store(fn, std::memory_order_relaxed);
        s.state.store(kRequested, std::memory_order_release);
        g_requested.fetch_add(1, std::memory_order_relaxed);
        g_requests.fetch_add(1, std::memory_order_release);
        return;
      }
      // Another thread claimed the slot meanwhile; `site` now holds its site.
    }
    if (site == return_address) {
      // Known. Only a site whose function was monitored since is asked again.
      uint32_t state = s.state.load(std::memory_order_relaxed);
      if (state == kMonitored &&
          s.state.compare_exchange_strong(state, kRequested, std::memory_order_acq_rel)) {
        g_requests.fetch_add(1, std::memory_order_release);
      }
      return;
    }
  }
  if (!g_table_full.load(std::memory_order_relaxed)) {
    g_table_full.store(true, std::memory_order_relaxed);
  }
}

size_t apply_callsite_patches() {
  Writer& w = writer();
  if (w.busy.exchange(true, std::memory_order_acquire)) return 0;
  struct Release {
    Writer& w;
    ~Release() { w.busy.store(false, std::memory_order_release); }
  } release{w};
  if (!w.initialised) initialise(w);
  if (g_off.load(std::memory_order_relaxed)) return 0;
  const FunctionFilter* filter = g_function_filter.load(std::memory_order_acquire);
  const uint64_t requests = g_requests.load(std::memory_order_acquire);
  const bool filter_changed = filter != w.last_filter;
  if (!filter_changed && requests == w.seen_requests && !w.deferred) return 0;
  w.last_filter = filter;
  w.seen_requests = requests;
  std::vector<Work> work;
  for (size_t i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[i];
    uint32_t state = s.state.load(std::memory_order_acquire);
    if (state == kCovered && filter_changed && allowed(filter, s.fn.load())) {
      s.state.store(kMonitored, std::memory_order_release);  // its function's owner site restores
      continue;
    }
    if (state != kRequested && !(state == kPatched && filter_changed)) continue;
    uint64_t fn = s.fn.load(std::memory_order_relaxed);
    if (state == kRequested && allowed(filter, fn)) {
      s.state.store(kMonitored, std::memory_order_release);  // monitored again before we got to it
    } else if (state == kRequested) {
      work.push_back({i, s.site.load(std::memory_order_relaxed), false, false});
    } else if (allowed(filter, fn)) {
      work.push_back({i, s.site.load(std::memory_order_relaxed), true, false});
    }
  }
  w.deferred = false;
  if (work.empty()) return 0;
  std::sort(work.begin(), work.end(), [](const Work& a, const Work& b) { return a.site < b.site; });
  // Sites that come back come back exits first: a function whose enter
  // call works again while its exit is still a NOP opens a frame that never
  // closes (a pattern switch from "-*" restored a request handler's enter
  // first; every later request of that thread joined its trace). With the
  // exits back (and every core serialised) before any enter, each recorded
  // enter finds its exit. An exit without its enter is harmless.
  bool exits_to_restore = false;
  for (Work& item : work) {
    if (!item.restore) continue;
    auto it = w.patches.find(item.site);
    item.exit_restore = it != w.patches.end() && it->second.exit_hook;
    exits_to_restore = exits_to_restore || item.exit_restore;
  }
  if (exits_to_restore) restore_exit_sites(w, work);
  Batch batch{&w, &work, filter, monotonic_ns_now()};
  dl_iterate_phdr(visit_object, &batch);
  for (const Work& item : work) {
    if (item.done || g_off.load(std::memory_order_relaxed)) continue;
    // No loaded object maps it any more (unloaded since the request).
    if (item.restore) w.patches.erase(item.site);
    if (!item.restore) g_rejected.fetch_add(1, std::memory_order_relaxed);
    g_slots[item.slot].state.store(item.restore ? kMonitored : kRejected,
                                   std::memory_order_release);
  }
  w.deferred = batch.deferred;
  if (batch.patched + batch.restored != 0 && w.sync_core) {
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0);
  }
  return batch.patched;
}

void publish_filter_after_exit_restore(const FunctionFilter* next, void (*publish)(void*),
                                       void* arg) {
  Writer& w = writer();
  bool held = false;
  for (int wait = 0; wait < 1000; ++wait) {
    if (!w.busy.exchange(true, std::memory_order_acquire)) {
      held = true;
      break;
    }
    struct timespec pause {
      0, 100'000
    };
    nanosleep(&pause, nullptr);
  }
  if (held && w.initialised && !g_off.load(std::memory_order_relaxed)) {
    // The patched exit sites are the writer's own list, not a scan of all
    // 65,536 slots: the first scan after start-up faulted the table's
    // pages in, and delayed a leveldb run's first cull by 14 ms, in which
    // the culled functions went on recording.
    std::vector<Work> work;
    for (const auto& [site, patch] : w.patches) {
      if (!patch.exit_hook) continue;
      const size_t i = slot_of(site);
      if (i == kSlots) continue;
      Slot& s = g_slots[i];
      if (s.state.load(std::memory_order_acquire) != kPatched) continue;
      if (!allowed(next, s.fn.load(std::memory_order_relaxed))) continue;
      work.push_back({i, site, true, false, true});
    }
    if (!work.empty()) {
      std::sort(work.begin(), work.end(),
                [](const Work& a, const Work& b) { return a.site < b.site; });
      restore_exit_sites(w, work);
      for (const Work& item : work) {
        if (item.done) continue;  // no loaded object maps it any more
        w.patches.erase(item.site);
        g_slots[item.slot].state.store(kMonitored, std::memory_order_release);
      }
    }
  }
  publish(arg);
  if (held) w.busy.store(false, std::memory_order_release);
}

namespace {

struct LeafQuery {
  const Writer* hooks;    // only its hook addresses are read
  const Writer* patcher;  // only its patches are read
  uint64_t fn, size;
  uint32_t max_instructions;
  LeafVerdict verdict;
};

// Runs while dl_iterate_phdr holds the loader's lock: the object cannot be
// unmapped while its code is read.
int classify_in_object(dl_phdr_info* info, size_t /*size*/, void* arg) {
  auto* q = static_cast<LeafQuery*>(arg);
  const ObjectView obj = view_of(info, static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  if (obj.code_of(q->fn, q->fn + q->size) == nullptr) return 0;  // not in this object
  // The code as compiled: hook calls of other functions inlined into this
  // one may be patched already (a short jump over the call's old bytes, a
  // `ret` over a tail jump's), and a linear sweep over those would decode
  // the leftover bytes as instructions.
  const std::vector<uint8_t> code = code_as_compiled(*q->patcher, q->fn, q->size);
  q->verdict = classify_leaf(code.data(), q->size, q->fn, q->max_instructions,
                             [&](uint64_t target, bool through_slot) {
                               HookCall call;
                               call.form = through_slot ? CallForm::kIndirect : CallForm::kDirect;
                               call.target = target;
                               return verified_hook(*q->hooks, obj, call) != Hook::kNone;
                             });
  return 1;
}

// The hook addresses as the patcher finds them, for the classifier: the
// patcher's own are only set when call-site patching is on.
std::atomic<const Writer*> g_classifier_hooks{nullptr};

}  // namespace

void prepare_code_classification() {
  if (g_classifier_hooks.load(std::memory_order_acquire) != nullptr) return;
  auto* w = new Writer;  // never freed: read by the writer thread until exit
  read_hook_addresses(*w);
  g_classifier_hooks.store(w, std::memory_order_release);
}

LeafVerdict classify_function_code(uint64_t fn, uint64_t size, uint32_t max_instructions) {
  LeafVerdict busy;
  busy.retry = true;
  busy.reason = "not now";
  const Writer* hooks = g_classifier_hooks.load(std::memory_order_acquire);
  if (hooks == nullptr) return busy;
  // The patch list is the patcher's: read while it is not patching (it
  // runs on this thread too; another thread only while publishing a filter).
  Writer& w = writer();
  if (w.busy.exchange(true, std::memory_order_acquire)) return busy;
  LeafQuery q{hooks, &w, fn, size, max_instructions, {}};
  q.verdict.reason = "not in a loaded object's code";
  if (fn != 0 && size != 0) dl_iterate_phdr(classify_in_object, &q);
  w.busy.store(false, std::memory_order_release);
  return q.verdict;
}

std::string callsite_patch_summary() {
  const CallsiteStats s = callsite_patch_stats();
  char line[512];
  std::snprintf(
      line, sizeof line,
      "call sites patched: %llu (%llu of them exit hooks, %llu tail jumps made ret, %llu calls "
      "sent to a ret; unpatchable %llu, unrecognised %llu, not proven their function's own %llu, "
      "restored %llu)%s%s",
      static_cast<unsigned long long>(s.patched), static_cast<unsigned long long>(s.patched_exits),
      static_cast<unsigned long long>(s.patched_tail_jumps),
      static_cast<unsigned long long>(s.redirected), static_cast<unsigned long long>(s.unpatchable),
      static_cast<unsigned long long>(s.rejected), static_cast<unsigned long long>(s.shared),
      static_cast<unsigned long long>(s.restored),
      s.mprotect_failed ? ", patching stopped: code could not be made writable" : "",
      s.table_full ? ", the site table was full" : "");
  return line;
}

CallsiteStats callsite_patch_stats() {
  CallsiteStats s;
  s.requested = g_requested.load();
  s.patched = g_patched.load();
  s.patched_exits = g_patched_exits.load();
  s.patched_tail_jumps = g_patched_tails.load();
  s.redirected = g_redirected.load();
  s.shared = g_shared.load();
  s.restored = g_restored.load();
  s.unpatchable = g_unpatchable.load();
  s.rejected = g_rejected.load();
  s.table_full = g_table_full.load();
  s.disabled = g_off.load();
  s.mprotect_failed = g_mprotect_failed.load();
  return s;
}

}  // namespace sonde::monitor
