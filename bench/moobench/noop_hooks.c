/* The floor of automatic instrumentation, as a peer in `sonde bench`:
 * empty -finstrument-functions hooks in a shared library, preloaded into the
 * same binary the other automatic configurations use. The cost measured is
 * the two calls through the PLT into an empty function. */
__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_enter(
    void* fn, void* site) {
  (void)fn;
  (void)site;
  __asm__ volatile("");
}

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_exit(
    void* fn, void* site) {
  (void)fn;
  (void)site;
  __asm__ volatile("");
}
