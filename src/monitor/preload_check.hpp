// Whether the preload library's probes see the program's calls. libsonde
// says so on stderr when a probe is switched on and they cannot, rather
// than record nothing silently (docs/probes.md, "Link order").
#pragma once

#include <string>

namespace sonde::monitor {

// True if libsonde-preload is loaded in this process.
bool preload_loaded();

// Why the program's calls to `symbol` do not reach the preload library's
// probe ("" if they do, or no library defining it is loaded): the preload
// library is not loaded, or the library defining `symbol` comes before it
// in the lookup order.
std::string preload_binding_problem(const char* symbol);

}  // namespace sonde::monitor
