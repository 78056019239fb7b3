#include "monitor/local_debuginfo.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace sonde::monitor {
namespace {

constexpr const char* kDebugRoot = "/usr/lib/debug";

bool readable(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

bool build_id_file_exists(Dwfl_Module* mod) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int length = dwfl_module_build_id(mod, &bits, &vaddr);
  if (length < 2 || bits == nullptr) return false;
  std::string path = std::string(kDebugRoot) + "/.build-id/";
  char hex[3];
  for (int i = 0; i < length; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", bits[i]);
    path += hex;
    if (i == 0) path += '/';
  }
  return readable(path + ".debug");
}

bool debuglink_file_exists(const char* file_name, const char* debuglink_file) {
  if (file_name == nullptr || debuglink_file == nullptr || debuglink_file[0] == '\0') return false;
  std::string file = file_name;
  const size_t slash = file.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : file.substr(0, slash);
  const std::string link = debuglink_file;
  if (link[0] == '/') return readable(link);
  return readable(dir + "/" + link) || readable(dir + "/.debug/" + link) ||
         readable(kDebugRoot + dir + "/" + link);
}

}  // namespace

int find_local_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                         const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                         char** debuginfo_file_name) {
  if (mod == nullptr) return -1;
  if (!build_id_file_exists(mod) && !debuglink_file_exists(file_name, debuglink_file)) return -1;
  return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                      debuglink_crc, debuginfo_file_name);
}

Dwfl_Callbacks process_callbacks(char** debuginfo_path) {
  Dwfl_Callbacks callbacks{};
  callbacks.find_elf = dwfl_linux_proc_find_elf;
  callbacks.find_debuginfo = find_local_debuginfo;
  callbacks.debuginfo_path = debuginfo_path;
  return callbacks;
}

}  // namespace sonde::monitor
