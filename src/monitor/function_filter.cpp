#include "monitor/function_filter.hpp"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "monitor/clock.hpp"
#include "monitor/controller.hpp"
#include "monitor/symbolizer.hpp"

namespace sonde::monitor {

std::atomic<const FunctionFilter*> g_function_filter{nullptr};

namespace {

struct Entry {
  uint64_t address;
  bool monitored;
};

int collect_module(Dwfl_Module* mod, void** /*userdata*/, const char* /*name*/, Dwarf_Addr /*base*/,
                   void* arg) {
  auto* ctx = static_cast<std::pair<const PatternSet*, std::vector<Entry>*>*>(arg);
  int n = dwfl_module_getsymtab(mod);
  for (int i = 0; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, nullptr, nullptr, nullptr);
    if (name == nullptr || GELF_ST_TYPE(sym.st_info) != STT_FUNC || addr == 0) continue;
    ctx->second->push_back({addr, ctx->first->monitored(demangle(name))});
  }
  return DWARF_CB_OK;
}

}  // namespace

void rebuild_function_filter(const PatternSet& patterns) {
  // Retired tables stay alive (and reachable from here): a probe may still
  // be reading one, and reloads are rare enough that the memory does not matter.
  static std::vector<const FunctionFilter*>* retired = new std::vector<const FunctionFilter*>;
  if (patterns.empty()) {
    if (const FunctionFilter* old = g_function_filter.exchange(nullptr)) retired->push_back(old);
    return;
  }
  char* debuginfo_path = nullptr;
  Dwfl_Callbacks callbacks{};
  callbacks.find_elf = dwfl_linux_proc_find_elf;
  callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  callbacks.debuginfo_path = &debuginfo_path;
  Dwfl* dwfl = dwfl_begin(&callbacks);
  std::vector<Entry> entries;
  if (dwfl != nullptr) {
    dwfl_report_begin(dwfl);
    dwfl_linux_proc_report(dwfl, getpid());
    dwfl_report_end(dwfl, nullptr, nullptr);
    std::pair<const PatternSet*, std::vector<Entry>*> ctx{&patterns, &entries};
    dwfl_getmodules(dwfl, collect_module, &ctx, 0);
    dwfl_end(dwfl);
  }
  uint64_t size = 16;
  while (size < entries.size() * 2) size *= 2;
  auto* filter = new FunctionFilter{size - 1, new uint64_t[size](), new uint8_t[size]()};
  for (const Entry& e : entries) {
    uint64_t h = (e.address * 0x9E3779B97F4A7C15ULL) >> 20;
    uint64_t i = h & filter->mask;
    while (filter->keys[i] != 0 && filter->keys[i] != e.address) i = (i + 1) & filter->mask;
    filter->keys[i] = e.address;
    filter->monitored[i] = e.monitored ? 1 : 0;
  }
  if (const FunctionFilter* old = g_function_filter.exchange(filter, std::memory_order_acq_rel)) {
    retired->push_back(old);
  }
}

namespace {
std::string g_patterns_file_text;  // what was last applied from patterns_file
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
