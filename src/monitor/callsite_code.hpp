// x86-64 machine code of the -finstrument-functions hook calls, and how one
// such call becomes a NOP with a single atomic store. Pure functions over
// bytes that never touch memory themselves, so the unit tests can feed them
// any pattern; callsite_patch.cpp reads and writes the real code.
#pragma once

#include <cstdint>
#include <cstring>

namespace sonde::monitor::callsite {

// The call instruction that ends at a return address.
enum class CallForm : uint8_t {
  kNone,
  kDirect,    // e8 rel32: call to the hook or to a PLT stub
  kIndirect,  // ff 15 disp32: call *GOT(%rip) (-fno-plt)
};

struct HookCall {
  CallForm form = CallForm::kNone;
  uint64_t start = 0;   // address of the instruction
  uint32_t length = 0;  // 5 or 6
  uint64_t target = 0;  // kDirect: the callee; kIndirect: the address of the pointer slot
};

inline int32_t read_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// `before` holds the 6 bytes ending at `ret` (ret - 6 … ret - 1). The two
// forms cannot both match: an e8 at ret - 5 would be ff 15's second byte.
inline HookCall decode_call(const uint8_t before[6], uint64_t ret) {
  HookCall c;
  if (before[1] == 0xe8) {
    c = {CallForm::kDirect, ret - 5, 5, ret + static_cast<int64_t>(read_i32(before + 2))};
  } else if (before[0] == 0xff && before[1] == 0x15) {
    c = {CallForm::kIndirect, ret - 6, 6, ret + static_cast<int64_t>(read_i32(before + 2))};
  }
  return c;
}

// The GOT slot a PLT stub jumps through, or 0 if the 16 bytes at `address`
// are not such a stub. Forms: `ff 25 disp32` (.plt, .plt.got, -z now),
// `f2 ff 25` (bnd jmp, MPX-era .plt.sec), and both after `f3 0f 1e fa`
// (endbr64: the IBT .plt.sec of -fcf-protection).
inline uint64_t plt_slot(const uint8_t stub[16], uint64_t address) {
  size_t at = 0;
  static constexpr uint8_t kEndbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
  if (std::memcmp(stub, kEndbr64, 4) == 0) at = 4;
  if (stub[at] == 0xf2) ++at;  // bnd prefix
  if (stub[at] != 0xff || stub[at + 1] != 0x25) return 0;
  uint64_t end = address + at + 6;
  return end + static_cast<int64_t>(read_i32(stub + at + 2));
}

// How the instruction [start, start + length) is replaced by one atomic
// store: a NOP of its length through an 8-byte CAS when it lies in one
// aligned 8-byte word, else through a 16-byte CAS (cmpxchg16b) when it lies
// in one aligned 16-byte block, else a 2-byte `jmp short` over the rest when
// its first two bytes lie in one aligned word. A 5-byte direct call that
// starts on the last byte of a 16-byte block fits none of these, but its
// rel32 lies in the next aligned word: it keeps its `e8` and gets a new
// target (kRedirect), a `ret` near the code (callsite_patch.cpp), so that
// the call returns at once. A 6-byte indirect call there stays as it is.
enum class StoreKind : uint8_t { kNone, kCas8, kCas16, kJmpShort, kRedirect };

inline StoreKind store_kind(uint64_t start, uint32_t length) {
  if ((start & 7) + length <= 8) return StoreKind::kCas8;
  if ((start & 15) + length <= 16) return StoreKind::kCas16;
  if ((start & 7) <= 6) return StoreKind::kJmpShort;
  if (length == 5) return StoreKind::kRedirect;  // start & 7 == 7: rel32 is the next word's first 4
  return StoreKind::kNone;
}

// The aligned word or block the store covers, and its size.
inline uint64_t store_block(StoreKind kind, uint64_t start) {
  if (kind == StoreKind::kRedirect) return (start + 1) & ~uint64_t{7};
  return kind == StoreKind::kCas16 ? start & ~uint64_t{15} : start & ~uint64_t{7};
}
inline uint32_t store_size(StoreKind kind) { return kind == StoreKind::kCas16 ? 16 : 8; }

// The bytes that replace the call (5- and 6-byte NOPs as the Intel manual
// recommends them; the short jump skips the call's remaining bytes, which
// stay as they were). Returns how many bytes are replaced. kRedirect: see
// redirect_bytes.
inline uint32_t patch_bytes(StoreKind kind, uint32_t length, uint8_t out[6]) {
  static constexpr uint8_t kNop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
  static constexpr uint8_t kNop6[6] = {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00};
  if (kind == StoreKind::kJmpShort) {
    out[0] = 0xeb;
    out[1] = static_cast<uint8_t>(length - 2);
    return 2;
  }
  std::memcpy(out, length == 5 ? kNop5 : kNop6, length);
  return length;
}

// kRedirect: `call target` for the 5-byte call at `start`, or 0 when
// `target` lies beyond a rel32's reach. Returns how many bytes the
// instruction has (the store writes the last 4; the `e8` is unchanged).
inline uint32_t redirect_bytes(uint64_t start, uint64_t target, uint8_t out[6]) {
  const int64_t rel = static_cast<int64_t>(target) - static_cast<int64_t>(start + 5);
  if (rel < INT32_MIN || rel > INT32_MAX) return 0;
  const auto rel32 = static_cast<int32_t>(rel);
  out[0] = 0xe8;
  std::memcpy(out + 1, &rel32, 4);
  return 5;
}

// `block` holds the store's current bytes (store_size of them, from
// store_block); writes into `desired` the same bytes with `count` bytes of
// `replacement` at `start`.
inline void overlay(const uint8_t* block, uint64_t block_address, uint32_t size, uint64_t start,
                    const uint8_t* replacement, uint32_t count, uint8_t* desired) {
  std::memcpy(desired, block, size);
  std::memcpy(desired + (start - block_address), replacement, count);
}

}  // namespace sonde::monitor::callsite
