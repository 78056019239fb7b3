#include "monitor/symbolizer.hpp"
#include "monitor/local_debuginfo.hpp"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

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

struct Symbolizer::Impl {
  Dwfl_Callbacks callbacks{};
  char* debuginfo_path = nullptr;
  Dwfl* dwfl = nullptr;
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
  dwfl_report_begin(impl_->dwfl);
  int rc = dwfl_linux_proc_report(impl_->dwfl, getpid());
  dwfl_report_end(impl_->dwfl, nullptr, nullptr);
  return rc == 0;
}

Symbol Symbolizer::resolve(uint64_t address) {
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
    if (const char* sym = dwfl_module_addrname(mod, address); sym != nullptr) {
      s.name = demangle(sym);
      s.resolved = true;
    }
    if (Dwfl_Line* line = dwfl_module_getsrc(mod, address); line != nullptr) {
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
  GElf_Sym sym{};
  GElf_Off offset = 0;
  const char* name = dwfl_module_addrinfo(mod, address, &offset, &sym, nullptr, nullptr, nullptr);
  if (name == nullptr || offset != 0 || GELF_ST_TYPE(sym.st_info) != STT_FUNC) return 0;
  return sym.st_size;
}

}  // namespace sonde::monitor
