// Whose hook call is it (hook_argument.hpp): code assembled by GNU as and
// linked at 0x1000 (ld -Ttext=0x1000), the bytes copied from objdump -d.
#include "monitor/hook_argument.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace sonde::monitor {
namespace {

constexpr uint64_t kA = 0x109b, kB = 0x109c;  // hook_enter 1098, hook_exit 1099, other 109a

// A function's own hooks as g++ -O2 -finstrument-functions lays them out:
// its address in callee-saved %r13 from the prologue, the exit hook
// reached by a tail jump, padding after it, and a block after the padding
// that jumps back to the exit path.
const uint8_t kOwn[] = {
    0x41, 0x55,                                // 1000: push %r13
    0x4c, 0x8d, 0x2d, 0xf7, 0xff, 0xff, 0xff,  // 1002: lea -0x9(%rip),%r13 # 1000 <f>
    0x53,                                      // 1009: push %rbx
    0x48, 0x89, 0xfb,                          // 100a: mov %rdi,%rbx
    0x4c, 0x89, 0xef,                          // 100d: mov %r13,%rdi
    0x48, 0x8b, 0x74, 0x24, 0x10,              // 1010: mov 0x10(%rsp),%rsi
    0xe8, 0x7e, 0x00, 0x00, 0x00,              // 1015: call 1098 <hook_enter>
    0x48, 0x85, 0xdb,                          // 101a: test %rbx,%rbx
    0x75, 0x1b,                                // 101d: jne 103a
    0x48, 0x89, 0xdf,                          // 101f: mov %rbx,%rdi
    0xe8, 0x73, 0x00, 0x00, 0x00,              // 1022: call 109a <other>
    0x48, 0x8b, 0x74, 0x24, 0x10,              // 1027: mov 0x10(%rsp),%rsi
    0x4c, 0x89, 0xef,                          // 102c: mov %r13,%rdi
    0x5b,                                      // 102f: pop %rbx
    0x41, 0x5d,                                // 1030: pop %r13
    0xe9, 0x62, 0x00, 0x00, 0x00,              // 1032: jmp 1099 <hook_exit>
    0x0f, 0x1f, 0x00,                          // 1037: nopl (%rax)
    0x48, 0x8b, 0x1b,                          // 103a: mov (%rbx),%rbx
    0xeb, 0xe8,                                // 103d: jmp 1027
};

// Two inlined functions, a and b, each with its own enter call, sharing one
// exit call whose argument comes from %rbx on both paths (SQLite's freeP4
// with sqlite3KeyInfoUnref and freeEphemeralFunction).
const uint8_t kShared[] = {
    0x53,                                      // 103f: push %rbx
    0x83, 0xff, 0x01,                          // 1040: cmp $0x1,%edi
    0x74, 0x11,                                // 1043: je 1056
    0x48, 0x8d, 0x1d, 0x4f, 0x00, 0x00, 0x00,  // 1045: lea 0x4f(%rip),%rbx # 109b <a>
    0x48, 0x89, 0xdf,                          // 104c: mov %rbx,%rdi
    0xe8, 0x44, 0x00, 0x00, 0x00,              // 104f: call 1098 <hook_enter>
    0xeb, 0x0f,                                // 1054: jmp 1065
    0x48, 0x8d, 0x1d, 0x3f, 0x00, 0x00, 0x00,  // 1056: lea 0x3f(%rip),%rbx # 109c <b>
    0x48, 0x89, 0xdf,                          // 105d: mov %rbx,%rdi
    0xe8, 0x33, 0x00, 0x00, 0x00,              // 1060: call 1098 <hook_enter>
    0x48, 0x89, 0xdf,                          // 1065: mov %rbx,%rdi
    0xe8, 0x2c, 0x00, 0x00, 0x00,              // 1068: call 1099 <hook_exit>
    0x5b,                                      // 106d: pop %rbx
    0xc3,                                      // 106e: ret
};

// The argument straight from a lea, from a caller-saved register a call
// clobbered, and from memory.
const uint8_t kMisc[] = {
    0x48, 0x8d, 0x3d, 0xf9, 0xff, 0xff, 0xff,  // 106f: lea -0x7(%rip),%rdi # 106f <h>
    0xe8, 0x1d, 0x00, 0x00, 0x00,              // 1076: call 1098 <hook_enter>
    0x48, 0x8d, 0x05, 0xed, 0xff, 0xff, 0xff,  // 107b: lea -0x13(%rip),%rax # 106f <h>
    0xe8, 0x13, 0x00, 0x00, 0x00,              // 1082: call 109a <other>
    0x48, 0x89, 0xc7,                          // 1087: mov %rax,%rdi
    0xe8, 0x0a, 0x00, 0x00, 0x00,              // 108a: call 1099 <hook_exit>
    0x48, 0x8b, 0x3e,                          // 108f: mov (%rsi),%rdi
    0xe8, 0x02, 0x00, 0x00, 0x00,              // 1092: call 1099 <hook_exit>
    0xc3,                                      // 1097: ret
};

// One register holds a, then b (linked at 0x2000: a at 0x2032, b at
// 0x2033); the alignment NOPs after the `ret` fall into a block that only
// the `js` reaches, and must not bring the states of the calls (where the
// register held a at one and b at the other) into it.
const uint8_t kPadding[] = {
    0x41, 0x56,                                // 2000: push %r14
    0x4c, 0x8d, 0x35, 0x29, 0x00, 0x00, 0x00,  // 2002: lea 0x29(%rip),%r14 # 2032 <a>
    0x4c, 0x89, 0xf7,                          // 2009: mov %r14,%rdi
    0xe8, 0x1e, 0x00, 0x00, 0x00,              // 200c: call 202f <hook_enter>
    0x4c, 0x8d, 0x35, 0x1b, 0x00, 0x00, 0x00,  // 2011: lea 0x1b(%rip),%r14 # 2033 <b>
    0x48, 0x85, 0xff,                          // 2018: test %rdi,%rdi
    0x78, 0x0e,                                // 201b: js 202b
    0x4c, 0x89, 0xf7,                          // 201d: mov %r14,%rdi
    0xe8, 0x0b, 0x00, 0x00, 0x00,              // 2020: call 2030 <hook_exit>
    0x41, 0x5e,                                // 2025: pop %r14
    0xc3,                                      // 2027: ret
    0x0f, 0x1f, 0x00,                          // 2028: nopl (%rax)
    0x31, 0xc0,                                // 202b: xor %eax,%eax
    0xeb, 0xee,                                // 202d: jmp 201d
};

TEST(HookArgument, AFunctionsOwnHooksPassItsAddressOnEveryPath) {
  const FunctionCode f(kOwn, sizeof kOwn, 0x1000);
  EXPECT_TRUE(f.passes(0x1015, 0x1000));   // enter
  EXPECT_TRUE(f.passes(0x1032, 0x1000));   // the tail jump, reached from two paths
  EXPECT_FALSE(f.passes(0x1015, kA));      // another function's address
  EXPECT_FALSE(f.passes(0x1022, 0x1000));  // a call whose %rdi is the argument
  EXPECT_FALSE(f.passes(0x1016, 0x1000));  // not an instruction boundary
}

TEST(HookArgument, ACallSharedByTwoInlinedFunctionsIsNoOnesOwn) {
  const FunctionCode g(kShared, sizeof kShared, 0x103f);
  EXPECT_TRUE(g.passes(0x104f, kA));  // each enter call has one function
  EXPECT_TRUE(g.passes(0x1060, kB));
  EXPECT_FALSE(g.passes(0x104f, kB));
  EXPECT_FALSE(g.passes(0x1068, kA));  // the shared exit: either
  EXPECT_FALSE(g.passes(0x1068, kB));
}

TEST(HookArgument, AlignmentPaddingIsReachedByNothing) {
  const FunctionCode p(kPadding, sizeof kPadding, 0x2000);
  EXPECT_TRUE(p.passes(0x200c, 0x2032));
  EXPECT_TRUE(p.passes(0x2020, 0x2033));  // from the fall-through and from the block after the NOPs
  EXPECT_FALSE(p.passes(0x2020, 0x2032));
}

// A function of another object: its address is loaded from a GOT slot
// whose value the caller reads (here: any slot holds 0x7000).
TEST(HookArgument, AnAddressLoadedFromAConstantSlotIsProven) {
  // 3000: mov 0x10(%rip),%rdi ; 3007: call 3100 ; 300c: ret
  const uint8_t code[] = {0x48, 0x8b, 0x3d, 0x10, 0x00, 0x00, 0x00,
                          0xe8, 0xf4, 0x00, 0x00, 0x00, 0xc3};
  uint64_t asked = 0;
  const FunctionCode got(code, sizeof code, 0x3000, [&](uint64_t slot, uint64_t* value) {
    asked = slot;
    *value = 0x7000;
    return true;
  });
  EXPECT_EQ(asked, 0x3007u + 0x10u);
  EXPECT_TRUE(got.passes(0x3007, 0x7000));
  const FunctionCode unknown(code, sizeof code, 0x3000, [](uint64_t, uint64_t*) { return false; });
  EXPECT_FALSE(unknown.passes(0x3007, 0x7000));  // a slot that may change
}

TEST(HookArgument, OnlyAnAddressTheCodeLoadsIsProven) {
  const FunctionCode h(kMisc, sizeof kMisc, 0x106f);
  EXPECT_TRUE(h.passes(0x1076, 0x106f));   // lea into %rdi
  EXPECT_FALSE(h.passes(0x108a, 0x106f));  // %rax did not survive the call
  EXPECT_FALSE(h.passes(0x1092, 0x106f));  // loaded from memory
}

}  // namespace
}  // namespace sonde::monitor
