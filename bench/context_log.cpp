// Writes a synthetic log shaped like the JPetStore run of seed 000 (Rohr et
// al. 2008: 2,032,573 executions in 36,036 traces) for measuring
// `sonde context` at that scale: TRACES traces drawn from TEMPLATES random
// ordered call trees of 20-92 calls over OPERATIONS operations, as Kieker
// OperationExecutionRecords (written at exit, as Kieker writes them).
//
// Timing has context on purpose: an execution's own time depends on its
// operation and its caller's operation, plus 0-500 ns of jitter; its
// inclusive time adds its subtree. Popular templates are drawn more often
// (weight 1/rank), as popular pages are in a web shop.
//
//   bench_context_log OUT [native|kieker-bin|kieker-dat] [TRACES] [TEMPLATES] [OPERATIONS] [SEED]
//                     [RUN] [SLOW_OP:SLOW_CALLER:FACTOR]
// Defaults: kieker-bin, 36036 traces, 1000 templates, 60 operations, seed 1,
// run 0, no slowdown. SEED fixes the templates; RUN the draws and jitter, so
// runs of one seed are the "same system" measured again. The slowdown
// multiplies the own time of operation SLOW_OP when called by SLOW_CALLER
// (operation numbers; a planted regression for `sonde context --baseline`).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "format/record.hpp"
#include "format/record_log_writer.hpp"
#include "format/schema.hpp"

namespace {

using sonde::format::OutputFormat;

struct Template {
  std::vector<uint32_t> op;     // per pre-order position
  std::vector<int32_t> parent;  // -1 for the root
  std::vector<int32_t> depth;
};

struct Options {
  std::string out;
  OutputFormat format = OutputFormat::kKiekerBin;
  uint64_t traces = 36036;
  uint32_t templates = 1000;
  uint32_t operations = 60;
  uint64_t seed = 1;
  uint64_t run = 0;
  uint32_t slow_op = UINT32_MAX, slow_caller = UINT32_MAX;
  double slow_factor = 1;
};

bool parse_u64(const char* text, uint64_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v == 0) return false;
  *out = v;
  return true;
}

bool parse_options(int argc, char** argv, Options* o) {
  if (argc < 2 || argc > 9) return false;
  o->out = argv[1];
  if (argc > 2) {
    const std::string_view f = argv[2];
    if (f == "native") {
      o->format = OutputFormat::kNative;
    } else if (f == "kieker-bin") {
      o->format = OutputFormat::kKiekerBin;
    } else if (f == "kieker-dat") {
      o->format = OutputFormat::kKiekerDat;
    } else {
      return false;
    }
  }
  uint64_t v = 0;
  if (argc > 3 && !parse_u64(argv[3], &o->traces)) return false;
  if (argc > 4) {
    if (!parse_u64(argv[4], &v) || v > 1'000'000) return false;
    o->templates = static_cast<uint32_t>(v);
  }
  if (argc > 5) {
    if (!parse_u64(argv[5], &v) || v > 100'000) return false;
    o->operations = static_cast<uint32_t>(v);
  }
  if (argc > 6 && !parse_u64(argv[6], &o->seed)) return false;
  if (argc > 7) {
    char* end = nullptr;
    o->run = std::strtoull(argv[7], &end, 10);
    if (end == argv[7] || *end != '\0') return false;
  }
  if (argc > 8) {
    unsigned op = 0, caller = 0;
    double factor = 0;
    char tail = 0;
    if (std::sscanf(argv[8], "%u:%u:%lf%c", &op, &caller, &factor, &tail) != 3 || factor <= 0 ||
        op >= o->operations || caller >= o->operations) {
      return false;
    }
    o->slow_op = op;
    o->slow_caller = caller;
    o->slow_factor = factor;
  }
  return true;
}

// A random ordered tree: node i > 0 hangs below a random earlier node,
// biased to recent ones so trees get deep as well as wide; then renumbered
// in pre-order (children in creation order).
Template random_template(std::mt19937_64& rng, uint32_t operations) {
  const auto n = std::uniform_int_distribution<int>(20, 92)(rng);
  std::vector<std::vector<int>> children(static_cast<size_t>(n));
  std::vector<uint32_t> op(static_cast<size_t>(n));
  // Entry points come from the first eighth of the operations.
  op[0] = std::uniform_int_distribution<uint32_t>(0, std::max(1u, operations / 8) - 1)(rng);
  for (int i = 1; i < n; ++i) {
    const int lo = std::max(0, i - 6);
    const int p = std::uniform_int_distribution<int>(lo, i - 1)(rng);
    children[static_cast<size_t>(p)].push_back(i);
    op[static_cast<size_t>(i)] = std::uniform_int_distribution<uint32_t>(0, operations - 1)(rng);
  }
  Template t;
  std::vector<std::pair<int, int32_t>> stack = {{0, -1}};  // (node, parent position)
  while (!stack.empty()) {
    const auto [node, parent] = stack.back();
    stack.pop_back();
    const auto pos = static_cast<int32_t>(t.op.size());
    t.op.push_back(op[static_cast<size_t>(node)]);
    t.parent.push_back(parent);
    t.depth.push_back(parent < 0 ? 0 : t.depth[static_cast<size_t>(parent)] + 1);
    const auto& kids = children[static_cast<size_t>(node)];
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.emplace_back(*it, pos);
  }
  return t;
}

// Own time of `op` when called from `caller` (UINT32_MAX for a root), ns.
int64_t own_time(uint32_t op, uint32_t caller) {
  uint64_t h = (uint64_t{op} << 32 | caller) * 0x9e3779b97f4a7c15ULL;
  h ^= h >> 31;
  return 1000 + static_cast<int64_t>(h % 50'000);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: %s OUT [native|kieker-bin|kieker-dat] [TRACES] [TEMPLATES<=1e6] "
                 "[OPERATIONS<=1e5] [SEED] [RUN] [SLOW_OP:SLOW_CALLER:FACTOR] (counts > 0)\n",
                 argv[0]);
    return 2;
  }
  std::mt19937_64 rng(o.seed);
  std::vector<Template> templates;
  templates.reserve(o.templates);
  for (uint32_t i = 0; i < o.templates; ++i)
    templates.push_back(random_template(rng, o.operations));
  rng.seed(o.seed ^ (0x9e3779b97f4a7c15ULL * (o.run + 1)));  // the run's draws
  std::vector<double> weights(o.templates);
  for (uint32_t i = 0; i < o.templates; ++i) weights[i] = 1.0 / (i + 1);
  std::discrete_distribution<uint32_t> pick(weights.begin(), weights.end());
  std::uniform_int_distribution<int64_t> jitter(0, 500);

  std::vector<std::string> names(o.operations);
  for (uint32_t i = 0; i < o.operations; ++i) {
    names[i] = "public void org.example.shop.Component" + std::to_string(i % 12) + ".operation" +
               std::to_string(i) + "()";
  }
  auto writer = sonde::format::open_record_log(o.format, o.out);
  sonde::format::Record r;
  sonde::format::reset_to_defaults(
      r, sonde::format::find_builtin_schema(sonde::format::kieker_class::kOperationExecution));
  r.values[1] = std::string_view("<no-session-id>");
  r.values[5] = std::string_view("host-1");

  uint64_t executions = 0;
  int64_t clock = 1'000'000'000;
  std::vector<int64_t> inclusive, tin;
  for (uint64_t trace = 1; trace <= o.traces; ++trace) {
    const Template& t = templates[pick(rng)];
    const size_t n = t.op.size();
    // Inclusive times bottom-up (children have higher positions).
    inclusive.assign(n, 0);
    for (size_t i = n; i-- > 0;) {
      const uint32_t caller = t.parent[i] < 0 ? UINT32_MAX : t.op[static_cast<size_t>(t.parent[i])];
      int64_t own = own_time(t.op[i], caller);
      if (t.op[i] == o.slow_op && caller == o.slow_caller) {
        own = static_cast<int64_t>(static_cast<double>(own) * o.slow_factor);
      }
      inclusive[i] += own + jitter(rng);
      if (t.parent[i] >= 0) inclusive[static_cast<size_t>(t.parent[i])] += inclusive[i];
    }
    // Entry times top-down: a child starts after its previous sibling ends.
    tin.assign(n, 0);
    std::vector<int64_t> next_child_start(n);
    tin[0] = clock;
    next_child_start[0] = clock + 1;
    for (size_t i = 1; i < n; ++i) {
      const auto p = static_cast<size_t>(t.parent[i]);
      tin[i] = next_child_start[p];
      next_child_start[p] = tin[i] + inclusive[i];
      next_child_start[i] = tin[i] + 1;
    }
    clock += inclusive[0] + 1000;
    // Exit order: a node after all its descendants (post-order).
    std::vector<size_t> order;
    order.reserve(n);
    std::vector<std::pair<size_t, bool>> stack = {{0, false}};
    std::vector<std::vector<size_t>> kids(n);
    for (size_t i = 1; i < n; ++i) kids[static_cast<size_t>(t.parent[i])].push_back(i);
    while (!stack.empty()) {
      auto [node, expanded] = stack.back();
      stack.pop_back();
      if (expanded) {
        order.push_back(node);
        continue;
      }
      stack.emplace_back(node, true);
      for (auto it = kids[node].rbegin(); it != kids[node].rend(); ++it)
        stack.emplace_back(*it, false);
    }
    for (size_t i : order) {
      const int64_t tout = tin[i] + inclusive[i];
      r.logging_timestamp = tout;
      r.values[0] = std::string_view(names[t.op[i]]);
      r.values[2] = static_cast<int64_t>(trace);
      r.values[3] = tin[i];
      r.values[4] = tout;
      r.values[6] = static_cast<int64_t>(i);
      r.values[7] = static_cast<int64_t>(t.depth[i]);
      if (!writer->on_record(r)) break;
      ++executions;
    }
  }
  const std::string error = writer->finish();
  if (!error.empty()) {
    std::fprintf(stderr, "bench_context_log: %s\n", error.c_str());
    return 1;
  }
  std::printf("%llu executions in %llu traces from %u templates over %u operations -> %s\n",
              static_cast<unsigned long long>(executions),
              static_cast<unsigned long long>(o.traces), o.templates, o.operations, o.out.c_str());
  return 0;
}
