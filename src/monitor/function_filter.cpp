#include "monitor/function_filter.hpp"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "format/function_name.hpp"
#include "monitor/callsite_patch.hpp"
#include "monitor/clock.hpp"
#include "monitor/controller.hpp"
#include "monitor/local_debuginfo.hpp"
#include "monitor/probe_busy.hpp"
#include "monitor/symbolizer.hpp"
#include "monitor/xray_mode.hpp"

namespace sonde::monitor {

using format::without_return_type;

std::atomic<const FunctionFilter*> g_function_filter{nullptr};

namespace {

// What the table is built from. Rebuilds come from set_patterns (any
// thread) and from the cull decision (the writer thread): one at a time.
struct FilterInputs {
  std::mutex mu;
  PatternSet patterns;
  std::vector<uint64_t> culled;  // sorted
  // Retired tables stay alive (and reachable from here): a probe may still
  // be reading one, and rebuilds are rare enough that the memory does not matter.
  std::vector<const FunctionFilter*> retired;
};

FilterInputs& inputs() {
  static FilterInputs* in = new FilterInputs;  // never destroyed: probes run during exit
  return *in;
}

bool is_culled(const std::vector<uint64_t>& culled, uint64_t address) {
  return std::binary_search(culled.begin(), culled.end(), address);
}

// Demangled names by mangled name, kept across rebuilds: every rebuild
// matches every function symbol of the process, and demangling them was
// its cost (about 40 ms per rebuild in db_bench; under ASan, a shop whose
// engine switched patterns at each phase spent 0.5 s of writer time on
// it and missed a 0.8-s phase, 2026-11-29). Used under FilterInputs::mu.
const std::string& demangled(std::string_view mangled) {
  static auto* cache = new std::unordered_map<std::string, std::string>;  // never freed
  auto it = cache->find(std::string(mangled));
  if (it == cache->end()) it = cache->emplace(std::string(mangled), demangle(mangled.data())).first;
  return it->second;
}

struct Collect {
  const PatternSet* patterns;
  const std::vector<uint64_t>* culled;
  std::vector<uint64_t>* excluded;
  std::unordered_set<uint64_t>* culled_named;  // culled addresses that have a symbol
};

int collect_module(Dwfl_Module* mod, void** /*userdata*/, const char* /*name*/, Dwarf_Addr /*base*/,
                   void* arg) {
  auto* ctx = static_cast<Collect*>(arg);
  // Every module, libstdc++ and libc included, although they are not
  // instrumented: -finstrument-functions instruments inlined functions too,
  // and the hook calls of a member of an extern template (std::string's
  // size(), _M_data(), ...) inlined into the program name libstdc++'s
  // exported copy. Until 2026-11-29 modules that do not import the hook
  // were skipped, and such functions could not be excluded by name: a
  // leveldb run whose patterns_file (a --cull report) excluded them still
  // recorded 9.6 M events instead of 0.5 M. Scanning them cost nothing
  // measurable (42.2 ms with the skip, 40.6 without, one rebuild in db_bench).
  int n = dwfl_module_getsymtab(mod);
  if (n <= 0) return DWARF_CB_OK;
  for (int i = 0; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, nullptr, nullptr, nullptr);
    if (name == nullptr || GELF_ST_TYPE(sym.st_info) != STT_FUNC || addr == 0) continue;
    PatternMatch m = match_patterns(*ctx->patterns, demangled(name));
    bool culled = is_culled(*ctx->culled, addr);
    if (culled) ctx->culled_named->insert(addr);
    if (m == PatternMatch::kExcluded || (m == PatternMatch::kNone && culled)) {
      ctx->excluded->push_back(addr);
    }
  }
  return DWARF_CB_OK;
}

// Every function the patterns exclude, and the culled ones no '+' rule pins.
std::vector<uint64_t> excluded_functions(const PatternSet& patterns,
                                         const std::vector<uint64_t>& culled) {
  if (patterns.empty()) return culled;  // nothing can pin them
  std::vector<uint64_t> excluded;
  std::unordered_set<uint64_t> culled_named;
  char* debuginfo_path = nullptr;
  Dwfl_Callbacks callbacks = process_callbacks(&debuginfo_path);
  if (Dwfl* dwfl = dwfl_begin(&callbacks); dwfl != nullptr) {
    dwfl_report_begin(dwfl);
    dwfl_linux_proc_report(dwfl, getpid());
    dwfl_report_end(dwfl, nullptr, nullptr);
    Collect ctx{&patterns, &culled, &excluded, &culled_named};
    dwfl_getmodules(dwfl, collect_module, &ctx, 0);
    dwfl_end(dwfl);
  }
  // A culled function without a symbol has no name a pattern could match.
  for (uint64_t a : culled) {
    if (!culled_named.contains(a)) excluded.push_back(a);
  }
  return excluded;
}

// Only excluded functions are stored: a miss means "monitored", so the
// table stays as small as the exclusions, and the probe's one lookup
// touches fewer cache lines than a table of every symbol would.
FunctionFilter* build_table(const std::vector<uint64_t>& excluded) {
  if (excluded.empty()) return nullptr;
  uint64_t size = 16;
  while (size < excluded.size() * 2) size *= 2;
  auto* filter =
      new FunctionFilter{size - 1, new uint64_t[size](), new uint8_t[size](), new int64_t[size]()};
  for (uint64_t address : excluded) {
    uint64_t h = (address * 0x9E3779B97F4A7C15ULL) >> 20;
    uint64_t i = h & filter->mask;
    while (filter->keys[i] != 0 && filter->keys[i] != address) i = (i + 1) & filter->mask;
    filter->keys[i] = address;
    filter->monitored[i] = 0;
  }
  return filter;
}

// Exit hook calls of newly excluded functions are patched only this long
// after the filter changed (callsite_patch.cpp), so that a frame recorded
// under the old filter returns through its exit call first. Patterns may
// exclude any function, long ones included: 100 ms. Culling excludes
// functions whose calls averaged under cull_max_ns (2 us) in the window
// it measured: 10 ms is thousands of their calls, and each culling window
// costs the program its culled functions' exit hooks until then (a --cull
// run of leveldb culls 8 times in half a second). The patterns start-up
// reads come before anything is recorded: none (before, a run culled from
// the start kept calling the exit hook of every culled function for its
// first 100 ms).
constexpr int64_t kPatternExitGraceNs = 100 * 1000000LL;
constexpr int64_t kCullExitGraceNs = 10 * 1000000LL;

// Called with in.mu held.
void rebuild_locked(FilterInputs& in, int64_t exit_grace_ns) {
  struct Publish {
    FilterInputs* in;
    FunctionFilter* filter;
    int64_t exit_grace_ns;
  } next{&in, build_table(excluded_functions(in.patterns, in.culled)), exit_grace_ns};
  // Exit hook calls come back before the filter lets their enters record
  // (callsite_patch.hpp).
  publish_filter_after_exit_restore(
      next.filter,
      [](void* arg) {
        auto* p = static_cast<Publish*>(arg);
        const FunctionFilter* old = g_function_filter.load(std::memory_order_relaxed);
        // Each function's own grace, from the publication that excluded it:
        // one given by an earlier table carries over (a single deadline for
        // all, pushed on by every change, kept a --cull run's exit calls
        // hooked while decisions came every few milliseconds).
        if (FunctionFilter* f = p->filter) {
          const int64_t due = monotonic_ns_now() + p->exit_grace_ns;
          for (uint64_t i = 0; i <= f->mask; ++i) {
            if (f->keys[i] == 0) continue;
            const int64_t earlier = old != nullptr ? old->exit_due_ns(f->keys[i]) : 0;
            f->exits_due_ns[i] = earlier != 0 ? earlier : due;
          }
        }
        g_function_filter.store(p->filter, std::memory_order_release);
        if (old != nullptr) p->in->retired.push_back(old);
      },
      &next);
}

}  // namespace

PatternMatch match_patterns(const PatternSet& patterns, std::string_view name) {
  // By the qualified name and parameters (patterns.hpp); a rule that is a
  // whole name with its return type (a culling report of a version before
  // 2026-11-29 wrote such lines) still matches exactly.
  const std::string_view qualified = without_return_type(name);
  const PatternRule* r = patterns.deciding_rule_for_function(qualified);
  if (r == nullptr && qualified.size() != name.size()) r = patterns.exact_rule(name);
  if (r == nullptr) return PatternMatch::kNone;
  return r->include ? PatternMatch::kIncluded : PatternMatch::kExcluded;
}

void rebuild_function_filter(const PatternSet& patterns, bool before_recording) {
  FilterInputs& in = inputs();
  MonitorLock lock(in.mu);
  in.patterns = patterns;
  rebuild_locked(in, before_recording ? 0 : kPatternExitGraceNs);
}

void set_culled_functions(std::vector<uint64_t> addresses) {
  FilterInputs& in = inputs();
  PatternSet patterns;
  {
    MonitorLock lock(in.mu);
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
    in.culled = std::move(addresses);
    rebuild_locked(in, kCullExitGraceNs);
    patterns = in.patterns;
  }
  // Outside the lock: XRay's patching asks function_culled for each function.
  xray_apply_patterns(patterns);
}

bool function_culled(uint64_t address) {
  FilterInputs& in = inputs();
  MonitorLock lock(in.mu);
  return is_culled(in.culled, address);
}

PatternSet current_function_patterns() {
  FilterInputs& in = inputs();
  MonitorLock lock(in.mu);
  return in.patterns;
}

namespace {
// constinit: written when monitoring starts, which can precede this file's
// dynamic initializers (see g_probes_file_text in diagnostic_records.cpp).
constinit std::string g_patterns_file_text;  // what was last applied from patterns_file
}  // namespace

void note_patterns_file_text(std::string text) { g_patterns_file_text = std::move(text); }

void poll_patterns_file() {
  const Config& c = current_config();
  if (c.patterns_file.empty()) return;
  static int64_t next_check = 0;
  int64_t now = monotonic_ns_now() / 1000000;
  if (now < next_check) return;
  next_check = now + c.patterns_reload_ms;
  // Compare contents, not mtime: two writes within one timestamp tick would
  // look unchanged. Pattern files are small, so reading them is cheap.
  std::ifstream in(c.patterns_file);
  if (!in) return;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text == g_patterns_file_text) return;
  g_patterns_file_text = text;
  if (std::string err = set_patterns(text); !err.empty()) {
    std::fprintf(stderr, "sonde: %s: %s (keeping the previous patterns)\n", c.patterns_file.c_str(),
                 err.c_str());
  }
}

}  // namespace sonde::monitor
