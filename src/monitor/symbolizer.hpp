// Turns function addresses into demangled names, modules and source lines,
// off the hot path (writer thread), with elfutils' libdwfl over this
// process's own mappings. Static functions resolve through .symtab; code in
// libraries loaded later is found by re-reading the mappings on a miss.
#pragma once

#include <cstdint>
#include <string>

namespace sonde::monitor {

struct Symbol {
  std::string name;     // demangled; "0x…" if unknown
  std::string module;   // path of the ELF file, "" if unknown
  uint64_t offset = 0;  // address relative to the module's load base
  std::string file;     // source file from DWARF, "" without debug info or not asked
  uint32_t line = 0;
  bool resolved = false;
};

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Name and module; with `source_line`, also the source file and line
  // from DWARF. The first line of a compilation unit makes libdw read the
  // unit's whole line table: 110 ms for SQLite's amalgamation, a cost that
  // only `source_lines = true` asks the writer to pay (docs/configuration.md).
  Symbol resolve(uint64_t address, bool source_line = false);
  // The size of the function symbol that starts exactly at `address`, or 0
  // if no sized symbol (.symtab or .dynsym) starts there.
  uint64_t function_size(uint64_t address);
  // The sized function symbol whose code contains `address`: its start and
  // size, or false if none does.
  bool function_containing(uint64_t address, uint64_t* start, uint64_t* size);

 private:
  bool report();
  struct Impl;
  Impl* impl_;
};

std::string demangle(const char* name);

}  // namespace sonde::monitor
