#include "monitor/symbolizer.hpp"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <vector>

#include "monitor/local_debuginfo.hpp"

namespace sonde::monitor {

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string result(out);
  std::free(out);
  return result;
}

namespace {

// One module's function symbols sorted by address, one per address. libdw's
// own lookups (dwfl_module_addrname, dwfl_module_addrinfo) search the whole
// symbol table on every call: naming db_bench's ~1,000 functions and sizing
// the ones culling patches was about 40 % of the writer's CPU in a
// `sonde run --cull` (perf, 2026-11-29). Reading the table once makes each
// lookup a binary search.
class ModuleFunctions {
 public:
  explicit ModuleFunctions(Dwfl_Module* mod) {
    const int n = dwfl_module_getsymtab(mod);
    for (int i = 0; i < n; ++i) {
      GElf_Sym sym{};
      GElf_Addr address = 0;
      const char* name = dwfl_module_getsym_info(mod, i, &sym, &address, nullptr, nullptr, nullptr);
      if (name == nullptr || *name == '\0' || address == 0 || sym.st_shndx == SHN_UNDEF ||
          GELF_ST_TYPE(sym.st_info) != STT_FUNC)
        continue;
      entries_.push_back({address, sym.st_size, name, binding_rank(GELF_ST_BIND(sym.st_info))});
    }
    // At one address (aliases), a sized symbol before one of size 0, then
    // the global before a weak before a local one, as libdw prefers; among
    // equals the first in the table, as libdw finds it.
    std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
      if (a.address != b.address) return a.address < b.address;
      if ((a.size != 0) != (b.size != 0)) return a.size != 0;
      return a.rank > b.rank;
    });
    entries_.erase(
        std::unique(entries_.begin(), entries_.end(),
                    [](const Entry& a, const Entry& b) { return a.address == b.address; }),
        entries_.end());
  }

  // The function symbol that starts at `address` or contains it; null if none.
  const char* name_at(uint64_t address) const {
    const Entry* e = containing(address);
    return e != nullptr ? e->name : nullptr;
  }
  // The start and size of the sized symbol that contains `address`.
  bool sized_containing(uint64_t address, uint64_t* start, uint64_t* size) const {
    const Entry* e = containing(address);
    if (e == nullptr || e->size == 0) return false;
    *start = e->address;
    *size = e->size;
    return true;
  }
  // The size of the symbol that starts exactly at `address`; 0 if none.
  uint64_t size_at(uint64_t address) const {
    const Entry* e = containing(address);
    return e != nullptr && e->address == address ? e->size : 0;
  }

 private:
  struct Entry {
    uint64_t address, size;
    const char* name;  // in libdw's copy of the string table, alive with the Dwfl
    int rank;
  };
  static int binding_rank(int binding) {
    return binding == STB_GLOBAL ? 2 : binding == STB_WEAK ? 1 : 0;
  }
  const Entry* containing(uint64_t address) const {
    auto it = std::upper_bound(entries_.begin(), entries_.end(), address,
                               [](uint64_t a, const Entry& e) { return a < e.address; });
    if (it == entries_.begin()) return nullptr;
    const Entry& e = *(it - 1);
    return address == e.address || address - e.address < e.size ? &e : nullptr;
  }
  std::vector<Entry> entries_;
};

}  // namespace

struct Symbolizer::Impl {
  Dwfl_Callbacks callbacks{};
  char* debuginfo_path = nullptr;
  Dwfl* dwfl = nullptr;
  // Forgotten whenever the modules are reported again: a module that was
  // unloaded may leave its Dwfl_Module's address to another.
  std::unordered_map<Dwfl_Module*, ModuleFunctions> functions;

  const ModuleFunctions& functions_of(Dwfl_Module* mod) {
    auto it = functions.find(mod);
    if (it == functions.end()) it = functions.emplace(mod, ModuleFunctions(mod)).first;
    return it->second;
  }
};

Symbolizer::Symbolizer() : impl_(new Impl) {
  impl_->callbacks = process_callbacks(&impl_->debuginfo_path);
  report();
}

Symbolizer::~Symbolizer() {
  if (impl_->dwfl != nullptr) dwfl_end(impl_->dwfl);
  delete impl_;
}

bool Symbolizer::report() {
  if (impl_->dwfl == nullptr) impl_->dwfl = dwfl_begin(&impl_->callbacks);
  if (impl_->dwfl == nullptr) return false;
  impl_->functions.clear();
  dwfl_report_begin(impl_->dwfl);
  int rc = dwfl_linux_proc_report(impl_->dwfl, getpid());
  dwfl_report_end(impl_->dwfl, nullptr, nullptr);
  return rc == 0;
}

Symbol Symbolizer::resolve(uint64_t address, bool source_line) {
  Symbol s;
  Dwfl_Module* mod = impl_->dwfl != nullptr ? dwfl_addrmodule(impl_->dwfl, address) : nullptr;
  if (mod == nullptr && report()) mod = dwfl_addrmodule(impl_->dwfl, address);
  if (mod != nullptr) {
    Dwarf_Addr base = 0;
    const char* main_file = nullptr;
    const char* name =
        dwfl_module_info(mod, nullptr, &base, nullptr, nullptr, nullptr, &main_file, nullptr);
    s.module = main_file != nullptr ? main_file : (name != nullptr ? name : "");
    s.offset = address - base;
    const char* sym = impl_->functions_of(mod).name_at(address);
    if (sym == nullptr) sym = dwfl_module_addrname(mod, address);  // not a function symbol
    if (sym != nullptr) {
      s.name = demangle(sym);
      s.resolved = true;
    }
    Dwfl_Line* line = source_line ? dwfl_module_getsrc(mod, address) : nullptr;
    if (line != nullptr) {
      int lineno = 0;
      if (const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr)) {
        s.file = file;
        s.line = static_cast<uint32_t>(lineno);
      }
    }
  }
  if (!s.resolved) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
    s.name = buf;
  }
  return s;
}

uint64_t Symbolizer::function_size(uint64_t address) {
  Dwfl_Module* mod = impl_->dwfl != nullptr ? dwfl_addrmodule(impl_->dwfl, address) : nullptr;
  if (mod == nullptr && report()) mod = dwfl_addrmodule(impl_->dwfl, address);
  if (mod == nullptr) return 0;
  return impl_->functions_of(mod).size_at(address);
}

bool Symbolizer::function_containing(uint64_t address, uint64_t* start, uint64_t* size) {
  Dwfl_Module* mod = impl_->dwfl != nullptr ? dwfl_addrmodule(impl_->dwfl, address) : nullptr;
  if (mod == nullptr && report()) mod = dwfl_addrmodule(impl_->dwfl, address);
  return mod != nullptr && impl_->functions_of(mod).sized_containing(address, start, size);
}

}  // namespace sonde::monitor
