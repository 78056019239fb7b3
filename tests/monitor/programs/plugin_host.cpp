// Loads an instrumented plugin, calls it, unloads it, ROUNDS times:
//   plugin_host PLUGIN.so ROUNDS CALLS
// The host itself has no probes; every event comes from the plugin, which
// is mapped at a possibly different address in each round.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const int rounds = std::atoi(argv[2]), calls = std::atoi(argv[3]);
  for (int r = 0; r < rounds; ++r) {
    void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (plugin == nullptr) {
      std::fprintf(stderr, "dlopen: %s\n", dlerror());
      return 3;
    }
    using Work = int (*)(int);
    auto work = reinterpret_cast<Work>(dlsym(plugin, "plugin_work"));
    if (work == nullptr || work(calls) < 0) return 4;
    if (dlclose(plugin) != 0) return 5;
  }
  return 0;
}
