// The straight-line-leaf classifier (monitor/leaf_code.hpp) on hand-encoded
// x86-64: the shapes -finstrument-functions gives an accessor (hook calls
// around a few moves), and each thing that makes a function unbounded or
// not a leaf.
#include "monitor/leaf_code.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace sonde::monitor {
namespace {

constexpr uint64_t kBase = 0x401000;
constexpr uint64_t kEnterHook = 0x409000;
constexpr uint64_t kExitHook = 0x409100;
constexpr uint64_t kHookSlot = 0x40a000;  // a GOT slot holding the exit hook
constexpr uint64_t kOtherFunction = 0x405000;

// Emits instructions at kBase + offset, computing rel32 displacements.
class Code {
 public:
  Code& bytes(std::initializer_list<uint8_t> b) {
    out_.insert(out_.end(), b);
    return *this;
  }
  Code& rel32(uint8_t opcode, uint64_t target) {
    const uint64_t next = here() + 5;
    const int32_t disp = static_cast<int32_t>(static_cast<int64_t>(target - next));
    out_.push_back(opcode);
    append(disp);
    return *this;
  }
  Code& call(uint64_t target) { return rel32(0xe8, target); }
  Code& jmp(uint64_t target) { return rel32(0xe9, target); }
  // call/jmp *disp32(%rip): ff 15 / ff 25.
  Code& through_slot(uint8_t modrm, uint64_t slot) {
    const uint64_t next = here() + 6;
    out_.push_back(0xff);
    out_.push_back(modrm);
    append(static_cast<int32_t>(static_cast<int64_t>(slot - next)));
    return *this;
  }
  // The hook calls -finstrument-functions wraps a function in, with their
  // argument set-up: mov 0x8(%rbp),%rsi; lea fn(%rip),%rdi; call hook.
  Code& hook_call(uint64_t hook) {
    bytes({0x48, 0x8b, 0x75, 0x08});
    const uint64_t next = here() + 7;
    bytes({0x48, 0x8d, 0x3d});
    append(static_cast<int32_t>(static_cast<int64_t>(kBase - next)));
    return call(hook);
  }
  Code& prologue() { return bytes({0x55, 0x48, 0x89, 0xe5}); }  // push %rbp; mov %rsp,%rbp
  Code& epilogue() { return bytes({0x5d, 0xc3}); }              // pop %rbp; ret
  uint64_t here() const { return kBase + out_.size(); }

  LeafVerdict classify(uint32_t max_instructions = 200) const {
    return classify_leaf(
        out_.data(), out_.size(), kBase, max_instructions, [](uint64_t target, bool through_slot) {
          return through_slot ? target == kHookSlot : target == kEnterHook || target == kExitHook;
        });
  }

 private:
  void append(int32_t v) {
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    out_.insert(out_.end(), b, b + 4);
  }
  std::vector<uint8_t> out_;
};

// An accessor: enter hook, a load, exit hook.
Code accessor_with(const std::function<void(Code&)>& body) {
  Code c;
  c.prologue().hook_call(kEnterHook);
  c.bytes({0x48, 0x8b, 0x07});  // mov (%rdi),%rax
  body(c);
  c.hook_call(kExitHook).epilogue();
  return c;
}

TEST(LeafCode, AnInstrumentedAccessorIsABoundedLeaf) {
  LeafVerdict v = accessor_with([](Code&) {}).classify();
  EXPECT_TRUE(v.bounded) << v.reason;
  EXPECT_EQ(v.instructions, 11u);  // 2 prologue, 3 + 3 hook calls, 1 load, 2 epilogue
}

TEST(LeafCode, ForwardBranchesAndSseWithMandatoryPrefixesStayBounded) {
  LeafVerdict v = accessor_with([](Code& c) {
                    c.bytes({0x48, 0x85, 0xc0});              // test %rax,%rax
                    c.bytes({0x74, 0x04});                    // je +4 (over the next instruction)
                    c.bytes({0xf2, 0x0f, 0x10, 0x07});        // movsd (%rdi),%xmm0: f2 is not rep
                    c.bytes({0xf3, 0x0f, 0x10, 0x0f});        // movss (%rdi),%xmm1
                    c.bytes({0xf0, 0x48, 0x0f, 0xb1, 0x0e});  // lock cmpxchg %rcx,(%rsi)
                  }).classify();
  EXPECT_TRUE(v.bounded) << v.reason;
}

TEST(LeafCode, ATailJumpToTheExitHookIsBounded) {
  Code c;
  c.prologue().hook_call(kEnterHook).bytes({0x5d});  // pop %rbp
  c.bytes({0x48, 0x8b, 0x75, 0x00}).jmp(kExitHook);  // jmp __cyg_profile_func_exit
  EXPECT_TRUE(c.classify().bounded) << c.classify().reason;
  Code through;
  through.prologue().hook_call(kEnterHook).bytes({0x5d}).through_slot(0x25, kHookSlot);
  EXPECT_TRUE(through.classify().bounded) << through.classify().reason;
}

TEST(LeafCode, AHookCalledThroughItsSlotIsBounded) {
  Code c;
  c.prologue().through_slot(0x15, kHookSlot).epilogue();  // call *slot(%rip)
  EXPECT_TRUE(c.classify().bounded) << c.classify().reason;
}

TEST(LeafCode, ALoopIsNotBounded) {
  // test; jne back to the load.
  Code c;
  c.prologue().hook_call(kEnterHook);
  const uint64_t top = c.here();
  c.bytes({0x48, 0x8b, 0x07, 0x48, 0x85, 0xc0});
  const int8_t back = static_cast<int8_t>(static_cast<int64_t>(top - (c.here() + 2)));
  c.bytes({0x75, static_cast<uint8_t>(back)});
  c.hook_call(kExitHook).epilogue();
  LeafVerdict v = c.classify();
  EXPECT_FALSE(v.bounded);
  EXPECT_STREQ(v.reason, "backward jump");
}

TEST(LeafCode, ACallToAnotherFunctionIsNotALeaf) {
  LeafVerdict v = accessor_with([](Code& c) { c.call(kOtherFunction); }).classify();
  EXPECT_FALSE(v.bounded);
  EXPECT_STREQ(v.reason, "calls a function");
  LeafVerdict indirect = accessor_with([](Code& c) { c.bytes({0xff, 0xd0}); }).classify();
  EXPECT_FALSE(indirect.bounded);  // call *%rax
  EXPECT_STREQ(indirect.reason, "calls a function");
}

TEST(LeafCode, TailCallsAndIndirectJumpsAreNotLeaves) {
  Code tail;
  tail.prologue().hook_call(kEnterHook).bytes({0x5d}).jmp(kOtherFunction);
  EXPECT_STREQ(tail.classify().reason, "jumps out of the function");
  LeafVerdict table = accessor_with([](Code& c) { c.bytes({0xff, 0xe0}); }).classify();
  EXPECT_FALSE(table.bounded);  // jmp *%rax: a switch table, or anything
  EXPECT_STREQ(table.reason, "indirect jump");
}

TEST(LeafCode, RepStringAndLoopInstructionsAndSystemCallsAreNotBounded) {
  LeafVerdict rep = accessor_with([](Code& c) { c.bytes({0xf3, 0xa4}); }).classify();
  EXPECT_STREQ(rep.reason, "rep string instruction");  // rep movsb
  LeafVerdict rep_stos = accessor_with([](Code& c) { c.bytes({0xf3, 0x48, 0xab}); }).classify();
  EXPECT_STREQ(rep_stos.reason, "rep string instruction");  // rep stos %rax
  LeafVerdict loop = accessor_with([](Code& c) { c.bytes({0xe2, 0xfe}); }).classify();
  EXPECT_STREQ(loop.reason, "loop instruction");  // loop to itself
  LeafVerdict sys = accessor_with([](Code& c) { c.bytes({0x0f, 0x05}); }).classify();
  EXPECT_STREQ(sys.reason, "system call or trap");
}

TEST(LeafCode, TheInstructionLimitCounts) {
  Code c = accessor_with([](Code& code) {
    for (int i = 0; i < 20; ++i) code.bytes({0x90});  // nop
  });
  EXPECT_TRUE(c.classify(31).bounded);  // 11 + 20
  LeafVerdict v = c.classify(30);
  EXPECT_FALSE(v.bounded);
  EXPECT_STREQ(v.reason, "too many instructions");
}

TEST(LeafCode, BytesThatAreNotCodeAreNotBounded) {
  Code c;
  c.prologue().bytes({0x06});  // push %es: no instruction in 64-bit mode
  EXPECT_STREQ(c.classify().reason, "undecodable bytes");
  EXPECT_STREQ(classify_leaf(nullptr, 0, kBase, 200, {}).reason, "no size");
}

}  // namespace
}  // namespace sonde::monitor
