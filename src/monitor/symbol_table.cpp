#include "monitor/symbol_table.hpp"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <unistd.h>

#include "monitor/local_debuginfo.hpp"

namespace sonde::monitor {
namespace {

using Visitor = std::function<void(uint64_t, const char*)>;

int visit_module(Dwfl_Module* mod, void** /*userdata*/, const char* /*name*/, Dwarf_Addr /*base*/,
                 void* arg) {
  const auto& visit = *static_cast<const Visitor*>(arg);
  int n = dwfl_module_getsymtab(mod);
  for (int i = 0; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, nullptr, nullptr, nullptr);
    if (name == nullptr || GELF_ST_TYPE(sym.st_info) != STT_FUNC || addr == 0) continue;
    visit(addr, name);
  }
  return DWARF_CB_OK;
}

}  // namespace

bool for_each_function_symbol(const Visitor& visit) {
  char* debuginfo_path = nullptr;
  Dwfl_Callbacks callbacks = process_callbacks(&debuginfo_path);
  Dwfl* dwfl = dwfl_begin(&callbacks);
  if (dwfl == nullptr) return false;
  dwfl_report_begin(dwfl);
  bool ok = dwfl_linux_proc_report(dwfl, getpid()) == 0;
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (ok) dwfl_getmodules(dwfl, visit_module, const_cast<Visitor*>(&visit), 0);
  dwfl_end(dwfl);
  return ok;
}

}  // namespace sonde::monitor
