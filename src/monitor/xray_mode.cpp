#include "monitor/xray_mode.hpp"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "monitor/controller.hpp"
#include "monitor/function_filter.hpp"
#include "monitor/local_debuginfo.hpp"
#include "monitor/probe_busy.hpp"
#include "monitor/probe_path.hpp"
#include "monitor/symbolizer.hpp"

// libsonde is built by g++ and never has sleds; should it ever be built by
// clang with -fxray-instrument, the handler must still not be instrumented
// or it would call itself.
#if defined(__clang__)
#define SONDE_XRAY_NEVER [[clang::xray_never_instrument]]
#else
#define SONDE_XRAY_NEVER
#endif

namespace sonde::monitor {
namespace {

// Mirrors of compiler-rt's xray_interface.h (not on g++'s include path);
// the values are fixed by LLVM's sled kinds and XRayPatchingStatus.
enum XRayEntryType : int { kXrayEntry = 0, kXrayExit = 1, kXrayTail = 2 };
enum XRayPatchingStatus : int { kNotInitialized = 0, kSuccess = 1, kOngoing = 2, kFailed = 3 };

using Handler = void (*)(int32_t, XRayEntryType);

struct XrayApi {
  int (*set_handler)(Handler) = nullptr;
  XRayPatchingStatus (*patch_function)(int32_t) = nullptr;
  XRayPatchingStatus (*unpatch_function)(int32_t) = nullptr;
  uintptr_t (*function_address)(int32_t) = nullptr;
  size_t (*max_function_id)() = nullptr;
  XRayPatchingStatus (*patch)() = nullptr;
  XRayPatchingStatus (*unpatch)() = nullptr;
  void (*init)() = nullptr;  // optional: only for runtimes built without pre-init

  bool complete() const {
    return set_handler && patch_function && unpatch_function && function_address &&
           max_function_id && patch && unpatch;
  }
};

struct ApiSymbol {
  const char* name;
  void** slot;
};

std::vector<ApiSymbol> api_symbols(XrayApi& api) {
  return {{"__xray_set_handler", reinterpret_cast<void**>(&api.set_handler)},
          {"__xray_patch_function", reinterpret_cast<void**>(&api.patch_function)},
          {"__xray_unpatch_function", reinterpret_cast<void**>(&api.unpatch_function)},
          {"__xray_function_address", reinterpret_cast<void**>(&api.function_address)},
          {"__xray_max_function_id", reinterpret_cast<void**>(&api.max_function_id)},
          {"__xray_patch", reinterpret_cast<void**>(&api.patch)},
          {"__xray_unpatch", reinterpret_cast<void**>(&api.unpatch)},
          {"__xray_init", reinterpret_cast<void**>(&api.init)}};
}

// ---------------------------------------------------------------------------
// Finding the runtime.

// A runtime that exports its API (none does today) is found the normal way.
bool resolve_exported(XrayApi& api) {
  for (const ApiSymbol& s : api_symbols(api)) *s.slot = dlsym(RTLD_DEFAULT, s.name);
  return api.complete();
}

struct MainProgram {
  uint64_t bias = 0;
  std::vector<std::pair<uint64_t, uint64_t>> code;  // executable segments [begin, end)
};

int first_object(dl_phdr_info* info, size_t /*size*/, void* arg) {
  auto* main = static_cast<MainProgram*>(arg);
  main->bias = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    uint64_t begin = info->dlpi_addr + ph.p_vaddr;
    main->code.emplace_back(begin, begin + ph.p_memsz);
  }
  return 1;  // glibc visits the main program first; stop there
}

enum class Presence { kAbsent, kFound, kNoSymbols };

// Keeps `address` for `name` if it is one of the API functions and lies in
// the program's code: never call into anything else.
void offer(XrayApi& api, const MainProgram& main, const char* name, uint64_t address) {
  if (name == nullptr || std::strncmp(name, "__xray_", 7) != 0) return;
  bool in_code = false;
  for (auto [begin, end] : main.code) in_code |= address >= begin && address < end;
  if (!in_code) return;
  for (const ApiSymbol& s : api_symbols(api)) {
    if (std::strcmp(name, s.name) == 0) *s.slot = reinterpret_cast<void*>(address);
  }
}

// clang links the XRay runtime into the executable only, with hidden
// visibility: its functions are in .symtab but never in .dynsym, so even
// -rdynamic cannot export them. Their addresses are read from the
// executable's symbol table here, once, off the hot path. kAbsent: the
// executable has no sleds (not an XRay program).
Presence scan_executable(XrayApi& api, const MainProgram& main) {
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Presence::kAbsent;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  bool has_sleds = false;
  Elf_Scn* symtab = nullptr;
  GElf_Shdr header{};
  size_t shstrndx = 0;
  if (elf != nullptr && elf_getshdrstrndx(elf, &shstrndx) == 0) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) == nullptr) continue;
      const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
      if (name != nullptr && std::strcmp(name, "xray_instr_map") == 0) has_sleds = true;
      if (sh.sh_type == SHT_SYMTAB) symtab = scn, header = sh;
    }
  }
  Elf_Data* data = has_sleds && symtab != nullptr ? elf_getdata(symtab, nullptr) : nullptr;
  if (data != nullptr && header.sh_entsize != 0) {
    size_t count = header.sh_size / header.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF) continue;
      offer(api, main, elf_strptr(elf, header.sh_link, sym.st_name), main.bias + sym.st_value);
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  if (!has_sleds) return Presence::kAbsent;
  return api.complete() ? Presence::kFound : Presence::kNoSymbols;
}

// A stripped executable may still have its symbol table in separate debug
// info (debuglink or build-id, e.g. Debian's -dbgsym packages); libdwfl
// finds it the way the symbolizer does.
Presence scan_debuginfo(XrayApi& api, const MainProgram& main) {
  if (main.code.empty()) return Presence::kNoSymbols;
  char* debuginfo_path = nullptr;
  Dwfl_Callbacks callbacks = process_callbacks(&debuginfo_path);
  Dwfl* dwfl = dwfl_begin(&callbacks);
  if (dwfl == nullptr) return Presence::kNoSymbols;
  dwfl_report_begin(dwfl);
  dwfl_linux_proc_report(dwfl, getpid());
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (Dwfl_Module* mod = dwfl_addrmodule(dwfl, main.code.front().first); mod != nullptr) {
    int n = dwfl_module_getsymtab(mod);
    for (int i = 0; i < n; ++i) {
      GElf_Sym sym;
      GElf_Addr address = 0;
      const char* name = dwfl_module_getsym_info(mod, i, &sym, &address, nullptr, nullptr, nullptr);
      if (GELF_ST_TYPE(sym.st_info) == STT_FUNC) offer(api, main, name, address);
    }
  }
  dwfl_end(dwfl);
  return api.complete() ? Presence::kFound : Presence::kNoSymbols;
}

Presence resolve_from_symbols(XrayApi& api) {
  MainProgram main;
  dl_iterate_phdr(first_object, &main);
  Presence p = scan_executable(api, main);
  return p == Presence::kNoSymbols ? scan_debuginfo(api, main) : p;
}

// ---------------------------------------------------------------------------
// The handler: called by XRay's trampolines at every patched sled.

// Function address by XRay id (1-based, dense), written once before the
// handler is installed; XRay publishes the handler with a release store.
const uint64_t* g_addresses = nullptr;
uint32_t g_max_id = 0;

SONDE_XRAY_NEVER void on_sled(int32_t id, XRayEntryType type) {
  auto index = static_cast<uint32_t>(id);
  // Ids beyond the table: other objects' functions (newer runtimes pack an
  // object index into the id for instrumented shared libraries).
  if (index > g_max_id) [[unlikely]] {
    return;
  }
  uint64_t address = g_addresses[index];
  if (type == kXrayEntry) {
    // As probes.cpp's probes_on(); the handler is installed only after
    // start-up, so "unstarted" cannot really occur here.
    uint8_t mode = g_mode.load(std::memory_order_relaxed);
    if (mode != kModeOn) [[unlikely]] {
      if (mode != kModeUnstarted) return;
      ensure_started();
      if (g_mode.load(std::memory_order_relaxed) != kModeOn) return;
    }
    // No stack pointer: the sled's trampoline stands between the function
    // and this handler; frames left without an exit are found by key.
    probe_enter(RawKind::kEnterFn, address, address, 0);
  } else if (type == kXrayExit || type == kXrayTail) {
    // XRay reports no exit for a frame left by unwinding, nor for a frame
    // whose function was unpatched while it ran: the probe's slow path
    // closes such frames (as left without returning) when an exit arrives
    // for a frame below them, which keeps the trace balanced.
    if (g_mode.load(std::memory_order_relaxed) == kModeShutdown) return;
    probe_exit(RawKind::kExitFn, address, address, 0);
  }
}

// ---------------------------------------------------------------------------
// Patching, off the hot path and serialised by one mutex.

enum PatchState : uint8_t { kUnpatched = 0, kPatched = 1, kUnknown = 2 };

struct Xray {
  std::mutex mu;
  bool active = false;
  bool warned = false;
  XrayApi api;
  uint32_t count = 0;              // instrumented functions, ids 1..count
  std::vector<std::string> names;  // by id, [0] unused; resolved on first use
  std::vector<uint8_t> state;      // PatchState by id
  PatternSet patterns;             // the latest, kept for xray_start
};

Xray& xray() {
  static Xray* x = new Xray;  // never destroyed: patterns may change during exit
  return *x;
}

// XRay refuses to patch while another patch runs (ONGOING); wait that out.
XRayPatchingStatus retrying(auto&& call) {
  XRayPatchingStatus status = call();
  for (int i = 0; status == kOngoing && i < 1000; ++i) {
    timespec nap{0, 1000000};
    nanosleep(&nap, nullptr);
    status = call();
  }
  return status;
}

void warn(Xray& x, const char* what, int32_t id, XRayPatchingStatus status) {
  if (x.warned) return;
  x.warned = true;
  std::fprintf(stderr, "sonde: xray: %s failed (function id %d, status %d); calls may be missed\n",
               what, static_cast<int>(id), static_cast<int>(status));
}

void set_one(Xray& x, int32_t id, bool on) {
  XRayPatchingStatus s = on ? retrying([&] { return x.api.patch_function(id); })
                            : retrying([&] { return x.api.unpatch_function(id); });
  if (s == kSuccess) {
    x.state[id] = on ? kPatched : kUnpatched;
  } else {
    x.state[id] = kUnknown;
    warn(x, on ? "patching" : "unpatching", id, s);
  }
}

void set_all(Xray& x, bool on) {
  XRayPatchingStatus s =
      on ? retrying([&] { return x.api.patch(); }) : retrying([&] { return x.api.unpatch(); });
  if (s != kSuccess) warn(x, on ? "patching all" : "unpatching all", 0, s);
  uint8_t now = s != kSuccess ? kUnknown : on ? kPatched : kUnpatched;
  for (size_t id = 1; id < x.state.size(); ++id) x.state[id] = now;
}

// Names as the writer will show them, so that patterns match what the
// user sees in the log. Only needed once there are patterns: resolving
// every function of a large program (DWARF included) is not free.
void resolve_names(Xray& x) {
  if (!x.names.empty()) return;
  Symbolizer symbolizer;
  x.names.assign(x.count + 1, std::string());
  for (uint32_t id = 1; id <= x.count; ++id) x.names[id] = symbolizer.resolve(g_addresses[id]).name;
}

// Called with x.mu held.
void apply(Xray& x) {
  size_t n = x.count;
  if (!x.patterns.empty()) resolve_names(x);
  std::vector<uint8_t> want(n + 1, 0);
  size_t on = 0, changes = 0, unknown = 0;
  for (size_t id = 1; id <= n; ++id) {
    // Culled functions (cull.hpp) are unpatched too, unless a '+' rule pins them.
    PatternMatch match =
        x.patterns.empty() ? PatternMatch::kNone : match_patterns(x.patterns, x.names[id]);
    bool monitored = match == PatternMatch::kIncluded ||
                     (match == PatternMatch::kNone && !function_culled(g_addresses[id]));
    want[id] = monitored ? kPatched : kUnpatched;
    on += want[id] == kPatched;
    changes += x.state[id] != want[id];
    unknown += x.state[id] == kUnknown;
  }
  if (changes == 0) return;
  // One call over the whole sled range is far cheaper than one mprotect
  // pair per function. Used when everything goes one way, and at start,
  // where the state is unknown (XRAY_OPTIONS=patch_premain=true may have
  // patched all) and no frame can be half-recorded yet.
  if (on == n || on == 0 || unknown == n) {
    set_all(x, on * 2 >= n);
  }
  for (size_t id = 1; id <= n; ++id) {
    if (x.state[id] != want[id]) set_one(x, static_cast<int32_t>(id), want[id] == kPatched);
  }
}

}  // namespace

void xray_start() {
  Xray& x = xray();
  MonitorLock lock(x.mu);
  if (x.active) return;
  if (!resolve_exported(x.api)) {
    x.api = XrayApi{};
    Presence p = resolve_from_symbols(x.api);
    if (p == Presence::kAbsent) return;  // not an XRay program: nothing to do, nothing printed
    if (p == Presence::kNoSymbols) {
      std::fprintf(stderr,
                   "sonde: xray: this program has XRay sleds but its symbol table is stripped "
                   "and no debug info was found; the XRay mode is off (see docs/modes.md)\n");
      return;
    }
  }
  if (x.api.set_handler(nullptr) == 0 && x.api.init != nullptr) x.api.init();
  auto n = static_cast<uint32_t>(x.api.max_function_id());
  if (n == 0) return;  // runtime present, no instrumented function
  // Leaked on purpose: a sled may still call the handler during exit.
  auto* addresses = new uint64_t[n + 1]();
  for (uint32_t id = 1; id <= n; ++id) {
    addresses[id] = x.api.function_address(static_cast<int32_t>(id));
  }
  g_addresses = addresses;
  g_max_id = n;
  x.count = n;
  x.state.assign(n + 1, kUnknown);
  if (x.api.set_handler(on_sled) == 0) {
    std::fprintf(stderr,
                 "sonde: xray: the XRay runtime is not initialised; the XRay mode is off\n");
    return;
  }
  x.active = true;
  // A child forked in the middle of a patch would inherit the mutex held by
  // a thread it does not have; hold it across fork() instead.
  pthread_atfork([] { xray().mu.lock(); }, [] { xray().mu.unlock(); }, [] { xray().mu.unlock(); });
  apply(x);
}

void xray_apply_patterns(const PatternSet& patterns) {
  Xray& x = xray();
  MonitorLock lock(x.mu);
  x.patterns = patterns;
  if (x.active) apply(x);
}

}  // namespace sonde::monitor
