// The saved context model as a baseline for a later log. A planted shop:
// `main` calls A (90 % of traces) or B (10 %); both call `work`, which takes
// 20 µs from A and 200 µs from B. The "later" log slows `work` from B by
// 30 %: the context check must find exactly the contexts that contain that
// slowdown (work <- B, B, and main in B's trace shape), while the check per
// whole operation sees only B (work's and main's medians are set by the
// 90 % that did not change).
#include "analysis/context/context_regression.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "analysis/context/context_baseline.hpp"
#include "analysis/context/context_tree.hpp"
#include "context/context_fixtures.hpp"
#include "stats/rank_test.hpp"

namespace sonde::test {
namespace {

using analysis::ChangeVerdict;
using analysis::ContextBaseline;
using analysis::RegressionReport;

analysis::ContextData shop(uint64_t seed, double b_factor, bool extra = false) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> jitter(0, 2000);
  analysis::ContextCollector c;
  for (int64_t id = 0; id < 1000; ++id) {
    const bool via_b = id % 10 == 0;
    const auto work = static_cast<int64_t>(static_cast<double>(via_b ? 200'000 : 20'000) *
                                               (via_b ? b_factor : 1.0) +
                                           static_cast<double>(jitter(rng)));
    const int64_t mid = work + 1000 + jitter(rng);
    add_trace(c, {{"main", 0, mid + 500}, {via_b ? "B" : "A", 1, mid}, {"work", 2, work}}, id);
    if (extra && id % 4 == 0) {
      // A caller the baseline never saw, and an operation it never saw.
      add_trace(c, {{"C", 0, work + 900}, {"work", 1, work}}, 10'000 + id);
      add_trace(c, {{"report", 0, 5000 + jitter(rng)}}, 20'000 + id);
    }
  }
  return c.take();
}

ContextBaseline baseline_of(const analysis::ContextData& d) {
  const analysis::ContextIndex index(d);
  analysis::ContextTree tree(d, index);
  const analysis::ContextTreeOptions options;
  tree.apply_operators(options);
  return analysis::make_baseline(d, index, tree, options, "shop-baseline");
}

// The model file's text, as --save-model writes it.
std::string model_text(const ContextBaseline& b) {
  std::ostringstream out;
  analysis::write_baseline(out, b);
  return out.str();
}

std::vector<std::string> labels(const ContextBaseline& b,
                                const std::vector<analysis::ContextChange>& list, ChangeVerdict v) {
  std::vector<std::string> out;
  for (const auto& c : list)
    if (c.verdict == v) out.push_back(b.references[c.reference].context);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RankTest, CountsPairsAndIsAntisymmetric) {
  const std::vector<int64_t> x = {19, 22, 16, 29, 24}, y = {20, 11, 17, 12};
  const auto xy = stats::mann_whitney(x, y);
  const auto yx = stats::mann_whitney(y, x);
  EXPECT_DOUBLE_EQ(xy.u, 17.0);  // pairs with x > y, counted by hand
  EXPECT_DOUBLE_EQ(xy.u + yx.u, 20.0);
  EXPECT_GT(xy.z, 0.0);
  EXPECT_LT(xy.p_greater, xy.p_less);
  EXPECT_DOUBLE_EQ(xy.p_greater, yx.p_less);
}

TEST(RankTest, TiesAndEqualSamplesGiveNoEvidence) {
  const std::vector<int64_t> same(20, 7);
  const auto r = stats::mann_whitney(same, same);
  EXPECT_DOUBLE_EQ(r.u, 200.0);  // every pair tied: half of 20 · 20
  EXPECT_DOUBLE_EQ(r.p_two_sided, 1.0);
  EXPECT_DOUBLE_EQ(stats::mann_whitney({}, same).p_two_sided, 1.0);
}

TEST(RankTest, SeparatedSamplesAreSignificant) {
  std::vector<int64_t> low, high;
  for (int i = 0; i < 50; ++i) {
    low.push_back(100 + i);
    high.push_back(1000 + i);
  }
  const auto r = stats::mann_whitney(high, low);
  EXPECT_DOUBLE_EQ(r.common_language, 1.0);
  EXPECT_LT(r.p_greater, 1e-10);
  EXPECT_GT(r.p_less, 0.999);
}

// Two strata, the same in both samples; only how many of each differs.
TEST(RankTest, StratifiedTestIgnoresADifferentMix) {
  std::vector<int64_t> fast_a, fast_b, slow_a, slow_b;
  for (int i = 0; i < 90; ++i) fast_a.push_back(100 + i % 9);
  for (int i = 0; i < 10; ++i) slow_a.push_back(1000 + i % 9);
  for (int i = 0; i < 50; ++i) fast_b.push_back(100 + i % 9);
  for (int i = 0; i < 50; ++i) slow_b.push_back(1000 + i % 9);
  std::vector<int64_t> pooled_a = fast_a, pooled_b = fast_b;
  pooled_a.insert(pooled_a.end(), slow_a.begin(), slow_a.end());
  pooled_b.insert(pooled_b.end(), slow_b.begin(), slow_b.end());
  EXPECT_LT(stats::mann_whitney(pooled_b, pooled_a).p_two_sided, 1e-4);
  const std::vector<stats::RankSums> strata = {stats::rank_sums(fast_b, fast_a),
                                               stats::rank_sums(slow_b, slow_a)};
  const auto r = stats::stratified_rank_test(strata);
  EXPECT_GT(r.p_two_sided, 0.5);
  EXPECT_NEAR(r.common_language, 0.5, 0.05);
  // One stratum shifted: found, though the unchanged stratum dilutes it.
  std::vector<int64_t> slower = slow_b;
  for (auto& x : slower) x += 500;
  const std::vector<stats::RankSums> shifted = {stats::rank_sums(fast_b, fast_a),
                                                stats::rank_sums(slower, slow_a)};
  EXPECT_LT(stats::stratified_rank_test(shifted).p_greater, 0.05);
  EXPECT_LT(std::abs(r.z), 1.0);
}

TEST(RankTest, HolmAdjustsInInputOrder) {
  const std::vector<double> p = {0.01, 0.04, 0.03};
  const std::vector<double> a = stats::holm_adjust(p);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_DOUBLE_EQ(a[0], 0.03);  // 3 · 0.01
  EXPECT_DOUBLE_EQ(a[2], 0.06);  // 2 · 0.03
  EXPECT_DOUBLE_EQ(a[1], 0.06);  // 1 · 0.04, raised to stay monotone
}

TEST(ContextRegression, FindsTheSlowdownOnlyInItsContexts) {
  const ContextBaseline b = baseline_of(shop(1, 1.0));
  const RegressionReport r = analysis::compare_with_baseline(b, shop(2, 1.3), {});
  EXPECT_EQ(r.executions, 3000u);
  EXPECT_EQ(r.in_known_contexts, 3000u);
  EXPECT_EQ(r.in_new_contexts, 0u);
  const std::vector<std::string> slower = labels(b, r.contexts, ChangeVerdict::kSlower);
  ASSERT_EQ(slower.size(), 3u) << ::testing::PrintToString(slower);
  EXPECT_EQ(slower[0], "B");
  EXPECT_EQ(slower[1].rfind("main @ shape", 0), 0u) << slower[1];
  EXPECT_EQ(slower[2], "work <- B");
  EXPECT_EQ(RegressionReport::count(r.contexts, ChangeVerdict::kFaster), 0u);
  // Without context only B itself shows.
  EXPECT_EQ(labels(b, r.operations, ChangeVerdict::kSlower), std::vector<std::string>{"B"});
  for (const auto& c : r.contexts) {
    if (c.verdict == ChangeVerdict::kSlower) {
      EXPECT_GT(c.change_percent, 10.0);
      EXPECT_LT(c.p_adjusted, 0.01);
    }
  }
}

// `main` calls `work` twice; both calls take 20 µs in the baseline, so the
// model keeps one context for them. The later log slows only the second.
analysis::ContextData twins(uint64_t seed, double second_factor) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> jitter(0, 2000);
  analysis::ContextCollector c;
  for (int64_t id = 0; id < 500; ++id) {
    const int64_t first = 20'000 + jitter(rng);
    const auto second =
        static_cast<int64_t>(static_cast<double>(20'000 + jitter(rng)) * second_factor);
    add_trace(c, {{"main", 0, first + second + 700}, {"work", 1, first}, {"work", 1, second}}, id);
  }
  return c.take();
}

TEST(ContextRegression, MergedTraceContextsAreAlsoTestedOneByOne) {
  const ContextBaseline b = baseline_of(twins(1, 1.0));
  const RegressionReport same = analysis::compare_with_baseline(b, twins(2, 1.0), {});
  ASSERT_EQ(same.leaves.size(), 2u);
  EXPECT_EQ(same.slower(), 0u);
  EXPECT_EQ(RegressionReport::count(same.leaves, ChangeVerdict::kUnchanged), 2u);

  const RegressionReport r = analysis::compare_with_baseline(b, twins(2, 1.4), {});
  ASSERT_EQ(r.leaves.size(), 2u);
  size_t slower = 0;
  for (const auto& c : r.leaves) {
    EXPECT_EQ(b.references[c.reference].operation, "work");
    EXPECT_EQ(c.n, 500u);
    EXPECT_EQ(c.leaf.rfind("$ > main > work @ shape 0 position ", 0), 0u) << c.leaf;
    if (c.verdict == ChangeVerdict::kSlower) {
      ++slower;
      EXPECT_NE(c.leaf.find("position 2"), std::string::npos) << c.leaf;
      EXPECT_GT(c.change_percent, 30.0);
    } else {
      EXPECT_EQ(c.verdict, ChangeVerdict::kUnchanged) << c.leaf;
    }
  }
  EXPECT_EQ(slower, 1u);
  EXPECT_GE(r.slower(), 1u);
}

TEST(ContextRegression, SameBehaviourWithOtherNoiseChangesNothing) {
  const ContextBaseline b = baseline_of(shop(1, 1.0));
  const RegressionReport r = analysis::compare_with_baseline(b, shop(3, 1.0), {});
  EXPECT_EQ(RegressionReport::count(r.contexts, ChangeVerdict::kSlower), 0u);
  EXPECT_EQ(RegressionReport::count(r.contexts, ChangeVerdict::kFaster), 0u);
  EXPECT_EQ(RegressionReport::count(r.contexts, ChangeVerdict::kUnchanged), r.contexts.size());
  EXPECT_EQ(RegressionReport::count(r.operations, ChangeVerdict::kUnchanged), 4u);
}

TEST(ContextRegression, FasterContextsAreReportedAsFaster) {
  const ContextBaseline b = baseline_of(shop(1, 1.0));
  const RegressionReport r = analysis::compare_with_baseline(b, shop(2, 0.7), {});
  EXPECT_EQ(labels(b, r.contexts, ChangeVerdict::kFaster).size(), 3u);
  EXPECT_EQ(RegressionReport::count(r.contexts, ChangeVerdict::kSlower), 0u);
}

TEST(ContextRegression, UnknownContextsAndOperationsAreCountedNotMatched) {
  const ContextBaseline b = baseline_of(shop(1, 1.0));
  const RegressionReport r = analysis::compare_with_baseline(b, shop(2, 1.0, true), {});
  // 250 traces C -> work: `work` in a context the baseline lacks, and C
  // and `report` (250 executions each), operations it lacks.
  EXPECT_EQ(r.in_new_contexts, 250u);
  EXPECT_EQ(r.in_unknown_operations, 500u);
  EXPECT_EQ(r.unknown_operations, (std::vector<std::string>{"C", "report"}));
  EXPECT_EQ(r.in_known_contexts, 3000u);
  using Count = std::pair<std::string, uint64_t>;
  EXPECT_EQ(r.new_contexts_by_operation, (std::vector<Count>{{"work", 250}}));
}

// The later log calls B five times as often; no timing changed. Per whole
// operation, work and main look much slower (more of their executions are
// the slow B ones); per context nothing changed.
TEST(ContextRegression, ADifferentMixIsNotAChange) {
  const ContextBaseline b = baseline_of(shop(1, 1.0));
  analysis::ContextCollector c;
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int64_t> jitter(0, 2000);
  for (int64_t id = 0; id < 1000; ++id) {
    const bool via_b = id % 2 == 0;
    const int64_t work = (via_b ? 200'000 : 20'000) + jitter(rng);
    const int64_t mid = work + 1000 + jitter(rng);
    add_trace(c, {{"main", 0, mid + 500}, {via_b ? "B" : "A", 1, mid}, {"work", 2, work}}, id);
  }
  const RegressionReport r = analysis::compare_with_baseline(b, c.take(), {});
  EXPECT_EQ(RegressionReport::count(r.contexts, ChangeVerdict::kSlower), 0u);
  EXPECT_EQ(RegressionReport::count(r.contexts, ChangeVerdict::kFaster), 0u);
  EXPECT_EQ(labels(b, r.operations, ChangeVerdict::kSlower),
            (std::vector<std::string>{"main", "work"}));
}

TEST(ContextRegression, TooFewExecutionsAreNotJudged) {
  const ContextBaseline b = baseline_of(shop(1, 1.0));
  analysis::RegressionOptions o;
  o.min_executions = 5000;
  const RegressionReport r = analysis::compare_with_baseline(b, shop(2, 1.3), o);
  EXPECT_EQ(RegressionReport::count(r.contexts, ChangeVerdict::kTooFew), r.contexts.size());
}

TEST(ContextBaselineFile, RoundTripsThroughJson) {
  const ContextBaseline b = baseline_of(shop(1, 1.0));
  ASSERT_FALSE(b.trace_contexts.empty());
  for (const auto& t : b.trace_contexts) {
    const auto& leaf = b.references[t.reference];
    EXPECT_EQ(b.references[leaf.entity].entity, leaf.entity) << "an entity is its own entity";
  }
  const std::string text = model_text(b);
  const nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["format"], analysis::kContextModelFormat);
  EXPECT_EQ(doc["references"].size(), b.references.size());
  EXPECT_EQ(doc["trace_contexts"].size(), b.trace_contexts.size());
  const ContextBaseline back = analysis::baseline_from_json(doc);
  EXPECT_EQ(model_text(back), text);  // nothing lost or altered on the way
  for (const auto& ref : b.references) {
    EXPECT_LE(ref.sample.size(), analysis::kDefaultBaselineSample);
    EXPECT_TRUE(std::is_sorted(ref.sample.begin(), ref.sample.end()));
  }
}

void expect_rejected(nlohmann::json doc, const std::string& words) {
  try {
    analysis::baseline_from_json(doc);
    ADD_FAILURE() << "accepted; expected an error about: " << words;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(ContextBaselineFile, RejectsBrokenFilesNamingTheProblem) {
  const nlohmann::json good = nlohmann::json::parse(model_text(baseline_of(shop(1, 1.0))));
  nlohmann::json d = good;
  d["format"] = "sonde-context-model/9";
  expect_rejected(d, "expected 'sonde-context-model/2'");
  // Version 1 named native operations in Kieker's form: saving it again helps.
  d["format"] = "sonde-context-model/1";
  expect_rejected(d, "save it again from its log");
  d = good;
  d["trace_contexts"][0][1] = 100000u;
  expect_rejected(d, "does not exist");
  d = good;
  d["references"][0]["entity"] = 100000u;
  expect_rejected(d, "names an entity that does not exist");
  d = good;
  d["trace_contexts"][0][0] = "xyz";
  expect_rejected(d, "16 hex digits");
  d = good;
  d["references"][0].erase("median");
  expect_rejected(d, "has no 'median'");
  d = good;
  d["references"][0]["sample"] = nlohmann::json::array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  d["references"][0]["n"] = 3u;
  expect_rejected(d, "10 values for n = 3");
  d = good;
  d["references"][d["operation_references"][0].get<size_t>()]["sample"] = nlohmann::json::array();
  expect_rejected(d, "operation reference 0 has no sample");
  d = good;
  d["references"][0]["level"] = "galaxy";
  expect_rejected(d, "unknown context level 'galaxy'");
  expect_rejected(nlohmann::json::array(), "not a JSON object");
}

TEST(ContextKeys, AreTheSameForTheSameContextsInAnotherLog) {
  analysis::ContextCollector first, second;
  add_trace(first, {{"r", 0, 10}, {"a", 1, 5}, {"b", 2, 1}}, 1);
  add_trace(first, {{"r", 0, 10}, {"b", 1, 5}}, 2);
  // The same two traces in the other order: every id differs.
  add_trace(second, {{"r", 0, 10}, {"b", 1, 5}}, 1);
  add_trace(second, {{"r", 0, 10}, {"a", 1, 5}, {"b", 2, 1}}, 2);
  const auto d1 = first.take(), d2 = second.take();
  const analysis::ContextKeys k1(d1), k2(d2);
  for (size_t l = 0; l < 4; ++l) {
    std::vector<uint64_t> a = k1.keys[l], b = k2.keys[l];
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << "level " << l;
    EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end()) << "distinct contexts share a key";
  }
}

TEST(ContextData, DeepStacksAreDescribedByTheirInnermostFrames) {
  analysis::ContextCollector c;
  std::vector<Call> calls;
  for (int d = 0; d < 40; ++d) calls.push_back({"f" + std::to_string(d), d, 100 - d});
  add_trace(c, calls, 1);
  const auto data = c.take();
  const std::string text =
      data.describe(analysis::ContextLevel::kStack, data.observations.back().stack);
  EXPECT_EQ(text.rfind("$ > … > f28 > ", 0), 0u) << text;
  EXPECT_EQ(text.substr(text.size() - 5), "> f39");
}

}  // namespace
}  // namespace sonde::test
