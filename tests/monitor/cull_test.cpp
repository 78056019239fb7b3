// The culling rule (monitor/cull_rule.hpp) and the call-site code decoding
// and store planning (monitor/callsite_code.hpp): pure functions, checked
// on numbers and byte patterns. The rule's report is read back with the
// pattern parser it is meant for.
#include <gtest/gtest.h>

#include <cstring>

#include "monitor/callsite_code.hpp"
#include "monitor/cull_rule.hpp"
#include "monitor/patterns.hpp"
#include "monitor/tail_exits.hpp"

namespace sonde::monitor {
namespace {

cull::FunctionSample cull_sample(uint64_t calls, double mean_ns, uint64_t callees = 0) {
  return {calls, mean_ns * static_cast<double>(calls), callees};
}

TEST(CullRule, CullsOnlyFrequentShortFunctions) {
  cull::Thresholds t;  // 100 calls, 1000/s, 2000 ns, 20 ns per probe
  // A tiny helper called a million times in a second.
  EXPECT_TRUE(cull::should_cull(cull_sample(1000000, 25), 1.0, t));
  // Long on its own: kept however often it runs.
  EXPECT_FALSE(cull::should_cull(cull_sample(1000000, 2000), 1.0, t));
  EXPECT_TRUE(cull::should_cull(cull_sample(1000000, 1999), 1.0, t));
  // Short but rare: too few calls for a mean, or too few per second to cost anything.
  EXPECT_FALSE(cull::should_cull(cull_sample(99, 25), 0.01, t));
  EXPECT_TRUE(cull::should_cull(cull_sample(100, 25), 0.01, t));
  EXPECT_FALSE(cull::should_cull(cull_sample(1999, 25), 2.0, t));
  EXPECT_TRUE(cull::should_cull(cull_sample(2000, 25), 2.0, t));
}

TEST(CullRule, SubtractsTheProbesOfMonitoredCallees) {
  cull::Thresholds t;
  // 2500 ns measured, of which 100 callees x 20 ns are their probes: 500 ns on its own.
  cull::FunctionSample f = cull_sample(10000, 2500, 10000 * 100);
  EXPECT_DOUBLE_EQ(cull::mean_ns(f), 2500);
  EXPECT_DOUBLE_EQ(cull::own_mean_ns(f, t.probe_ns), 500);
  EXPECT_TRUE(cull::should_cull(f, 1.0, t));
  // With a 10-ns probe the same measurement leaves 1500 ns; with 5 ns, 2000: kept.
  t.probe_ns = 10;
  EXPECT_DOUBLE_EQ(cull::own_mean_ns(f, t.probe_ns), 1500);
  EXPECT_TRUE(cull::should_cull(f, 1.0, t));
  t.probe_ns = 5;
  EXPECT_FALSE(cull::should_cull(f, 1.0, t));
  // Never below zero.
  EXPECT_DOUBLE_EQ(cull::own_mean_ns(cull_sample(10, 30, 1000), 20), 0);
}

TEST(CullRule, ThresholdsAreTheConfiguredOnes) {
  cull::Thresholds t;
  t.min_calls = 5;
  t.min_rate = 0;
  t.max_ns = 100;
  EXPECT_TRUE(cull::should_cull(cull_sample(5, 99), 1000.0, t));
  EXPECT_FALSE(cull::should_cull(cull_sample(4, 99), 1000.0, t));
  EXPECT_FALSE(cull::should_cull(cull_sample(5, 100), 1000.0, t));
  // A span under a millisecond counts as one: 5 calls are 5000/s, not infinity.
  t.min_rate = 5001;
  EXPECT_FALSE(cull::should_cull(cull_sample(5, 10), 0.0, t));
  t.min_rate = 5000;
  EXPECT_TRUE(cull::should_cull(cull_sample(5, 10), 0.0, t));
}

TEST(CullRule, PredictsTheProbeCostBeforeAndAfter) {
  cull::Prediction p = cull::predict(2000000, 1500000, 2.0, 20);
  EXPECT_DOUBLE_EQ(p.calls_per_s_before, 1000000);
  EXPECT_DOUBLE_EQ(p.calls_per_s_after, 250000);
  EXPECT_DOUBLE_EQ(p.cost_ms_per_s_before, 20);  // 1 M/s x 20 ns = 20 ms per second
  EXPECT_DOUBLE_EQ(p.cost_ms_per_s_after, 5);
}

TEST(CullRule, ExcludeLinesMatchExactlyTheName) {
  const char* names[] = {"helper(unsigned int)", "std::vector<int>::operator*() const",
                         "a::b(char const*, int*)", "odd;name", " padded "};
  std::string text;
  for (const char* n : names) text += cull::exclude_line(n) + "\n";
  PatternSet set;
  ASSERT_EQ(set.parse(text), "") << text;
  ASSERT_EQ(set.rules().size(), 5u) << text;
  for (const char* n : names) EXPECT_FALSE(set.monitored(n)) << n;
  // '*' became '?': no wildcard swallowing other names.
  EXPECT_TRUE(set.monitored("std::vector<int>::operator*() constant"));
  EXPECT_TRUE(set.monitored("a::b(char const*, int*, int)"));
  EXPECT_TRUE(set.monitored("helper(int)"));
}

TEST(CullRule, ReportIsAPatternsFileExcludingTheCulled) {
  cull::Report r;
  r.source = "test";
  r.rounds = {{1001000, 3, 1.0, 1, 1000000}};
  r.culled = {{"helper(unsigned int)", cull_sample(1000000, 25)}};
  r.pinned = {{"pinned()", cull_sample(500, 30)}};
  r.notes = {"a note; with a semicolon"};
  r.kept = {{"request(unsigned int, int)", cull_sample(500, 50000, 500000)}};
  const std::string report = cull::format_report(r);
  PatternSet set;
  ASSERT_EQ(set.parse(report), "") << report;
  ASSERT_EQ(set.rules().size(), 1u) << report;
  EXPECT_FALSE(set.monitored("helper(unsigned int)"));
  EXPECT_TRUE(set.monitored("request(unsigned int, int)"));
  EXPECT_TRUE(set.monitored("pinned()"));
  EXPECT_NE(report.find("1,000,000 calls"), std::string::npos) << report;
  EXPECT_NE(report.find("Observed: 1,001,000 monitored calls of 3 functions in 1.000 s (1.0 "
                        "Mcalls/s), 1 culled (1,000,000 of those calls)"),
            std::string::npos)
      << report;
  // Several rounds are numbered.
  r.rounds.push_back({5000, 2, 2.0, 0, 0});
  EXPECT_NE(cull::format_report(r).find("# Round 2: 5,000 monitored calls"), std::string::npos);
  // 1.0 M calls/s x 20 ns before; 1,000 calls/s after.
  EXPECT_NE(report.find("before 20.0 ms/s"), std::string::npos) << report;
  EXPECT_NE(report.find("after 0.0 ms/s (1.0 kcalls/s)"), std::string::npos) << report;
}

TEST(CullRule, GroupedAndSiNumbers) {
  EXPECT_EQ(cull::grouped(0), "0");
  EXPECT_EQ(cull::grouped(999), "999");
  EXPECT_EQ(cull::grouped(1000), "1,000");
  EXPECT_EQ(cull::grouped(12345678), "12,345,678");
  EXPECT_EQ(cull::si(12.0e6), "12.0 M");
  EXPECT_EQ(cull::si(1500), "1.5 k");
  EXPECT_EQ(cull::si(15), "15 ");
}

// ---------------------------------------------------------------------------
// Call-site code.

using callsite::CallForm;
using callsite::StoreKind;

TEST(CallsiteCode, DecodesDirectAndIndirectCalls) {
  // call rel32 = +0x100 ending at 0x1000: target 0x1100.
  const uint8_t direct[6] = {0x90, 0xe8, 0x00, 0x01, 0x00, 0x00};
  callsite::HookCall c = callsite::decode_call(direct, 0x1000);
  EXPECT_EQ(c.form, CallForm::kDirect);
  EXPECT_EQ(c.start, 0xffbu);
  EXPECT_EQ(c.length, 5u);
  EXPECT_EQ(c.target, 0x1100u);
  // A negative displacement (-0x20).
  const uint8_t back[6] = {0x00, 0xe8, 0xe0, 0xff, 0xff, 0xff};
  EXPECT_EQ(callsite::decode_call(back, 0x1000).target, 0xfe0u);
  // call *disp32(%rip) (-fno-plt): the target is the pointer's slot.
  const uint8_t indirect[6] = {0xff, 0x15, 0x33, 0x2e, 0x00, 0x00};
  c = callsite::decode_call(indirect, 0x119d);
  EXPECT_EQ(c.form, CallForm::kIndirect);
  EXPECT_EQ(c.start, 0x1197u);
  EXPECT_EQ(c.length, 6u);
  EXPECT_EQ(c.target, 0x119du + 0x2e33u);
  // call *%rax and anything else: not a hook call we can patch.
  const uint8_t reg[6] = {0x48, 0x89, 0xc7, 0x90, 0xff, 0xd0};
  EXPECT_EQ(callsite::decode_call(reg, 0x1000).form, CallForm::kNone);
}

TEST(CallsiteCode, FindsTailJumpsAtInstructionBoundariesOnly) {
  // g++ 12 -O2 -finstrument-functions, tests/monitor/programs/cull_program.cpp's
  // helper_tail at 0x1930: its exit hook call is `jmp 0x1130` (the hook's PLT
  // stub). Before it, `mov $0x..e9.., %eax` holds e9 inside its immediate:
  // a byte search would take it for a jump, the decoder must not.
  const uint8_t code[] = {
      0x55,                                      // push %rbp
      0x48, 0x8d, 0x2d, 0xf8, 0xff, 0xff, 0xff,  // lea -0x8(%rip),%rbp
      0x53,                                      // push %rbx
      0xb8, 0xe9, 0x10, 0x20, 0x30,              // mov $0x302010e9,%eax (decoy)
      0x48, 0x89, 0xfb,                          // mov %rdi,%rbx
      0xe8, 0x03, 0xf7, 0xff, 0xff,              // call (the enter hook)
      0x5b,                                      // pop %rbx
      0x5d,                                      // pop %rbp
      0xe9, 0xc5, 0xf7, 0xff, 0xff,              // jmp rel32 (the exit hook)
      0xff, 0x25, 0x10, 0x00, 0x00, 0x00,        // jmp *0x10(%rip)
  };
  const uint64_t at = 0x1930;
  std::vector<TailJump> jumps = find_tail_jumps(code, sizeof code, at);
  ASSERT_EQ(jumps.size(), 2u);
  EXPECT_EQ(jumps[0].address, at + 24);
  EXPECT_EQ(jumps[0].length, 5u);
  EXPECT_FALSE(jumps[0].indirect);
  EXPECT_EQ(jumps[0].target, at + 29 - 0x83bu);
  EXPECT_EQ(jumps[1].address, at + 29);
  EXPECT_TRUE(jumps[1].indirect);
  EXPECT_EQ(jumps[1].target, at + 35 + 0x10);
  // A sweep stops at bytes that are no instruction (data after the code).
  const uint8_t bad[] = {0x90, 0x06, 0xe9, 0x00, 0x00, 0x00, 0x00};  // 06 is invalid in 64-bit
  EXPECT_TRUE(find_tail_jumps(bad, sizeof bad, 0x2000).empty());
}

TEST(CallsiteCode, FindsTheGotSlotOfEachPltForm) {
  // .plt / -z now: jmp *0x2fc2(%rip) at 0x1040 -> slot 0x1046 + 0x2fc2.
  uint8_t plt[16] = {0xff, 0x25, 0xc2, 0x2f, 0x00, 0x00, 0x68, 0x01, 0x00, 0x00, 0x00, 0xe9};
  EXPECT_EQ(callsite::plt_slot(plt, 0x1040), 0x1046u + 0x2fc2u);
  // .plt.sec with endbr64 and bnd jmp.
  uint8_t sec[16] = {0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00};
  EXPECT_EQ(callsite::plt_slot(sec, 0x2000), 0x2000u + 11 + 0x10);
  // endbr64 and a plain jmp (newer binutils).
  uint8_t ibt[16] = {0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00};
  EXPECT_EQ(callsite::plt_slot(ibt, 0x2000), 0x2000u + 10 + 0x10);
  // A function, not a stub.
  uint8_t fn[16] = {0x55, 0x48, 0x89, 0xe5};
  EXPECT_EQ(callsite::plt_slot(fn, 0x3000), 0u);
}

TEST(CallsiteCode, ChoosesOneAtomicStorePerPosition) {
  // A 5-byte call at each offset within a 16-byte block.
  const StoreKind five[16] = {
      StoreKind::kCas8,     StoreKind::kCas8,     StoreKind::kCas8,     StoreKind::kCas8,
      StoreKind::kCas16,    StoreKind::kCas16,    StoreKind::kCas16,    StoreKind::kCas16,
      StoreKind::kCas8,     StoreKind::kCas8,     StoreKind::kCas8,     StoreKind::kCas8,
      StoreKind::kJmpShort, StoreKind::kJmpShort, StoreKind::kJmpShort, StoreKind::kRedirect};
  for (uint64_t off = 0; off < 16; ++off) {
    EXPECT_EQ(callsite::store_kind(0x4000 + off, 5), five[off]) << "offset " << off;
  }
  // The redirect stores the rel32 only: the first 4 bytes of the next word.
  EXPECT_EQ(callsite::store_block(StoreKind::kRedirect, 0x400f), 0x4010u);
  EXPECT_EQ(callsite::store_size(StoreKind::kRedirect), 8u);
  // 6 bytes: offsets 3..7 need the 16-byte store, 11..14 the short jump, 15 nothing.
  EXPECT_EQ(callsite::store_kind(0x4002, 6), StoreKind::kCas8);
  EXPECT_EQ(callsite::store_kind(0x4003, 6), StoreKind::kCas16);
  EXPECT_EQ(callsite::store_kind(0x400a, 6), StoreKind::kCas8);
  EXPECT_EQ(callsite::store_kind(0x400b, 6), StoreKind::kJmpShort);
  EXPECT_EQ(callsite::store_kind(0x400f, 6), StoreKind::kNone);
  EXPECT_EQ(callsite::store_block(StoreKind::kCas16, 0x4007), 0x4000u);
  EXPECT_EQ(callsite::store_block(StoreKind::kCas8, 0x400d), 0x4008u);
  EXPECT_EQ(callsite::store_size(StoreKind::kCas16), 16u);
  EXPECT_EQ(callsite::store_size(StoreKind::kJmpShort), 8u);
}

TEST(CallsiteCode, RedirectsADirectCallWithinARel32sReach) {
  uint8_t bytes[6] = {};
  // call at 0x400f, target 0x7000: rel32 = 0x7000 - 0x4014.
  ASSERT_EQ(callsite::redirect_bytes(0x400f, 0x7000, bytes), 5u);
  EXPECT_EQ(bytes[0], 0xe8);
  EXPECT_EQ(callsite::read_i32(bytes + 1), 0x7000 - 0x4014);
  // Backwards, to the last reachable byte below.
  const uint64_t site = 0x90000000f;
  ASSERT_EQ(callsite::redirect_bytes(site, site + 5 - 0x80000000ull, bytes), 5u);
  EXPECT_EQ(callsite::read_i32(bytes + 1), INT32_MIN);
  // One byte further is out of reach either way.
  EXPECT_EQ(callsite::redirect_bytes(site, site + 5 - 0x80000001ull, bytes), 0u);
  EXPECT_EQ(callsite::redirect_bytes(site, site + 5 + 0x80000000ull, bytes), 0u);
  // What decode_call reads back from the redirected call is the new target.
  uint8_t before[6] = {0x90};
  ASSERT_EQ(callsite::redirect_bytes(0x400f, 0x7000, bytes), 5u);
  std::memcpy(before + 1, bytes, 5);
  EXPECT_EQ(callsite::decode_call(before, 0x4014).target, 0x7000u);
}

TEST(CallsiteCode, OverlaysANopOrAShortJumpAndKeepsTheRest) {
  uint8_t code[16];
  for (int i = 0; i < 16; ++i) code[i] = static_cast<uint8_t>(0xa0 + i);
  // A 5-byte call at offset 5: inside the 16-byte block, not the 8-byte word.
  uint8_t bytes[6];
  uint32_t n = callsite::patch_bytes(StoreKind::kCas16, 5, bytes);
  ASSERT_EQ(n, 5u);
  uint8_t out[16];
  callsite::overlay(code, 0x5000, 16, 0x5005, bytes, n, out);
  const uint8_t nop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
  EXPECT_EQ(std::memcmp(out + 5, nop5, 5), 0);
  EXPECT_EQ(std::memcmp(out, code, 5), 0);
  EXPECT_EQ(std::memcmp(out + 10, code + 10, 6), 0);
  // A 6-byte call gets the 6-byte NOP.
  ASSERT_EQ(callsite::patch_bytes(StoreKind::kCas8, 6, bytes), 6u);
  EXPECT_EQ(bytes[0], 0x66);
  EXPECT_EQ(bytes[1], 0x0f);
  // The short jump skips the call's remaining bytes: 3 of a 5-byte call, 4 of a 6-byte one.
  ASSERT_EQ(callsite::patch_bytes(StoreKind::kJmpShort, 5, bytes), 2u);
  EXPECT_EQ(bytes[0], 0xeb);
  EXPECT_EQ(bytes[1], 3);
  callsite::patch_bytes(StoreKind::kJmpShort, 6, bytes);
  EXPECT_EQ(bytes[1], 4);
  callsite::overlay(code, 0x5008, 8, 0x500d, bytes, 2, out);
  EXPECT_EQ(out[5], 0xeb);
  EXPECT_EQ(out[6], 4);
  EXPECT_EQ(out[7], code[7]);
  EXPECT_EQ(out[4], code[4]);
}

}  // namespace
}  // namespace sonde::monitor
