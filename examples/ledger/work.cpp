// Deterministic CPU work: the ledger's hash chain and checkpoint seals.
#include "ledger.hpp"

namespace ledger {

uint64_t mix_rounds(uint64_t seed, long rounds) {
  uint64_t lane[8];
  for (int i = 0; i < 8; ++i) lane[i] = seed + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(i + 1);
  for (long r = 0; r < rounds; ++r) {
    for (int i = 0; i < 8; ++i) {
      uint64_t x = lane[i] ^ lane[(i + 3) & 7];
      x ^= x >> 33;
      x *= 0xff51afd7ed558ccdULL;
      x ^= x >> 29;
      lane[i] = x + static_cast<uint64_t>(r);
    }
  }
  uint64_t digest = 0;
  for (uint64_t x : lane) digest = (digest ^ x) * 0x100000001b3ULL;
  return digest;
}

}  // namespace ledger
