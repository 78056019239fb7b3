// Names that probes refer to by number: manual operations (sonde_op) and
// failure causes. Registration happens once per operation and once per
// distinct cause, off the hot path, under a mutex; the writer reads names
// back by id. Names are copied, so a dlclose()d library's strings may go.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sonde/sonde.h"

namespace sonde::monitor {

struct ManualOperation {
  std::string name;
  std::string file;
  int line;
};

// Assigns op->id on first use and sets op->state to the current
// generation's enabled or disabled tag. Pattern reloads start a new
// generation, so stale descriptors come back here lazily: sonde never writes
// to a descriptor it was not just handed (its library may be unloaded).
void register_operation(sonde_op* op);
// Copies the operation's data; false if the id is unknown.
bool lookup_operation(uint32_t id, ManualOperation* out);

uint32_t intern_cause(const char* cause);

// fork(): application threads take the registry's lock when they register an
// operation; it is held across fork so a child never inherits it locked.
void lock_registry_for_fork();
void unlock_registry_after_fork();
std::string cause_text(uint32_t id);

}  // namespace sonde::monitor
