// The interface between MooBench's driver and its monitored application.
#pragma once

#include <cstdint>

extern "C" uint64_t monitoredMethod(uint64_t method_time_ns, int recursion_depth);
