// libdwfl callbacks for looking at this process's own modules, with
// separate debug info looked up on the local disk only.
//
// libdwfl's standard lookup ends with debuginfod: for a module it finds no
// local debug file for (every stripped system library), it starts a
// debuginfod client, which initialises libcurl and OpenSSL inside the
// monitored program, and with DEBUGINFOD_URLS set downloads debug info
// while the program starts. A monitor must not do either.
#pragma once

#include <elfutils/libdwfl.h>

namespace sonde::monitor {

// dwfl_standard_find_debuginfo, called only when a local candidate exists:
// the build-id file under /usr/lib/debug/.build-id, or the debuglink file
// beside the module, in its .debug folder or under /usr/lib/debug.
int find_local_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                         const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                         char** debuginfo_file_name);

// Callbacks for dwfl_linux_proc_report on this process. `debuginfo_path`
// must outlive the Dwfl.
Dwfl_Callbacks process_callbacks(char** debuginfo_path);

}  // namespace sonde::monitor
