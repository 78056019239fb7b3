// Zero-cost adaptive mode for programs built with clang's -fxray-instrument:
// every instrumented function carries nop sleds that cost nothing until
// patched. libsonde patches exactly the functions the current patterns
// allow and unpatches the rest whenever the patterns change, so an excluded
// function costs nothing at all (the native counterpart of AIM's run-time
// re-instrumentation). See docs/modes.md.
//
// The XRay runtime is linked statically into the program, not into
// libsonde, and its API symbols are hidden there (visibility("hidden") in
// libclang_rt.xray), so dlsym cannot see them. libsonde looks them up by
// name in the executable's own symbol table instead; nothing is required
// from the program beyond keeping that table (not fully stripped).
#pragma once

#include "monitor/patterns.hpp"

namespace sonde::monitor {

// Called once after monitoring has started. If the executable contains the
// XRay runtime and sleds: installs sonde's handler and patches what the
// patterns last given to xray_apply_patterns allow. Otherwise does nothing.
void xray_start();

// Called after every pattern change (also before xray_start, whose patterns
// it remembers): patches newly included functions, unpatches excluded ones.
void xray_apply_patterns(const PatternSet& patterns);

}  // namespace sonde::monitor
