// A direct-mapped cache keyed by a schema's serial (RecordSchema::serial),
// in front of a map, for per-record lookups by schema: Kieker's flow
// records alternate between a few types (before, after, trace metadata),
// so a one-entry cache of the last schema missed on almost every record
// and each miss hashed into the map. Serials are unique per schema object
// and never reused, so a hit cannot be another schema's entry; the owner
// still checks what the value depends on when the value can change in
// place (e.g. a layout rebuilt for a new serial at the same address).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace sonde::format {

template <typename Value, size_t kSlots = 16>
class SerialCache {
  static_assert(kSlots > 0 && (kSlots & (kSlots - 1)) == 0, "a power of two");

 public:
  // The value cached for `serial`, or nullptr. Serial 0 is never handed
  // out (next_schema_serial starts at 1), so empty slots never hit.
  const Value* find(uint64_t serial) const {
    const Slot& s = slots_[serial & (kSlots - 1)];
    return s.serial == serial && serial != 0 ? &s.value : nullptr;
  }
  void put(uint64_t serial, Value value) { slots_[serial & (kSlots - 1)] = {serial, value}; }

 private:
  struct Slot {
    uint64_t serial = 0;
    Value value{};
  };
  std::array<Slot, kSlots> slots_{};
};

}  // namespace sonde::format
