// A direct-mapped cache keyed by where a string's text lies, for lookups
// that would otherwise hash the text every time: decoded records and
// reconstructed traces hand out views into a reader's or a connection's
// string tables, so the same text comes back at the same address. Each
// entry keeps the text it was made for (a view into storage the owner
// keeps, e.g. its interned copy), and a lookup hits only when the text is
// still equal: memory reused for other text is a miss, never a wrong value.
// Used by the reconstruction's interning, the native writer's string ids
// and the index writer's name ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace sonde::format {

template <typename Value, size_t kSlots>
class AddressCache {
  static_assert(kSlots > 0 && (kSlots & (kSlots - 1)) == 0, "a power of two");

 public:
  // The value cached for `text` at its address, or nullptr.
  const Value* find(std::string_view text) const {
    const Slot& s = slots_[slot_of(text)];
    return s.source == text.data() && s.text == text ? &s.value : nullptr;
  }
  // Caches `value` for `text`'s address; `stored` is the same text in
  // storage that outlives the entry (the hit check compares against it).
  void put(std::string_view text, std::string_view stored, Value value) {
    slots_[slot_of(text)] = {text.data(), stored, value};
  }

 private:
  struct Slot {
    const char* source = nullptr;
    std::string_view text;
    Value value{};
  };
  static size_t slot_of(std::string_view text) {
    const auto where = reinterpret_cast<uintptr_t>(text.data());
    return ((where >> 3) ^ (where >> 15) ^ text.size()) & (kSlots - 1);
  }
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
};

}  // namespace sonde::format
