// The stable 64-bit keys that match calling contexts between logs and
// processes (docs/formats/context-model.md, "Context keys"): hash chains of
// splitmix64 mixes over an FNV-1a hash of each operation's signature. Here,
// in the format layer, because two layers compute them and must agree bit
// for bit: the analysis (a saved context model, `sonde context
// --save-model`) and libsonde's flight recorder, which scores each finished
// trace against such a model while the program runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace sonde::format::context_key {

inline uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
inline uint64_t combine(uint64_t a, uint64_t b) { return mix(a ^ mix(b)); }
inline uint64_t name_key(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return mix(h ^ s.size());
}
inline constexpr uint64_t kRootTag = 0x24;  // `$`, the caller / parent of a root

// An operation by its signature (Kieker's operation signature, as the
// log's reader gives it).
inline uint64_t operation(std::string_view signature) { return combine(1, name_key(signature)); }

// An ordered call tree: operation keys in pre-order and each position's
// parent position (-1 for a root).
inline uint64_t trace_shape(std::span<const uint64_t> operations, std::span<const int32_t> parent) {
  uint64_t h = combine(4, operations.size());
  for (size_t i = 0; i < operations.size(); ++i) {
    h = combine(h, combine(operations[i], static_cast<uint64_t>(parent[i] + 1)));
  }
  return h;
}

// A trace context: a position in a call-tree shape.
inline uint64_t trace(uint64_t shape, size_t position) {
  return combine(shape, static_cast<uint64_t>(position));
}

}  // namespace sonde::format::context_key
