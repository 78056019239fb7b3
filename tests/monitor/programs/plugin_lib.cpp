// A plugin built with -finstrument-functions, loaded and unloaded with
// dlopen/dlclose by plugin_host.cpp. `step` is static: its name must be
// resolved from the plugin's own symbol table, even after the plugin is gone.
namespace {
[[gnu::noinline]] int step(int i) {
  asm volatile("" ::: "memory");  // keep the call
  return i * 3 + 1;
}
}  // namespace

extern "C" [[gnu::noinline]] int plugin_work(int calls) {
  int sum = 0;
  for (int i = 0; i < calls; ++i) sum += step(i);
  return sum;
}
