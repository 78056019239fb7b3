#include "serve/context_api.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "analysis/context/context_levels.hpp"
#include "analysis/context/context_log.hpp"
#include "analysis/context/context_tree.hpp"
#include "analysis/context/context_tree_dot.hpp"
#include "serve/trace_query_params.hpp"

namespace sonde::serve {

using nlohmann::json;

struct ContextModels::Loaded {
  uint64_t generation = 0;
  analysis::ContextLog log;
  std::unique_ptr<analysis::ContextIndex> index;
  analysis::ContextLevelReport levels;
};

namespace {

constexpr size_t kMaxTreeNodes = 5000;
constexpr int64_t kMaxDepth = 4;  // root -> operation -> caller -> stack -> trace

struct TreeRequest {
  analysis::ContextTreeOptions model;
  std::string operation;  // empty: all
  int64_t depth = kMaxDepth;
  size_t max_nodes = 500;
};

std::optional<ParamError> bad_param(const std::string& name, const std::string& what) {
  return ParamError{name, "parameter '" + name + "': " + what};
}

// Fills `r` from the parameters; `tree` allows the tree's own parameters.
std::optional<ParamError> parse_request(const QueryParams& params, bool tree, TreeRequest* r) {
  static const std::set<std::string> model_names = {"min_observations", "similarity", "max_leaves"};
  static const std::set<std::string> tree_names = {"operation", "depth", "max_nodes"};
  for (const auto& [name, value] : params) {
    if (!model_names.contains(name) && !(tree && tree_names.contains(name))) {
      return bad_param(name, "unknown parameter");
    }
    if (params.count(name) > 1) return bad_param(name, "given more than once");
    if (value.size() > 4096) return bad_param(name, "longer than 4096 bytes");
    const std::string shown = value.substr(0, 64);
    int64_t n = 0;
    if (name == "operation") {
      if (value.empty()) return bad_param(name, "needs an operation name");
      r->operation = value;
    } else if (name == "similarity") {
      double d = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), d);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
          !std::isfinite(d) || d < 0 || d > 1000) {
        return bad_param(name, "needs a number from 0 to 1000, got '" + shown + "'");
      }
      r->model.similarity = d;
    } else if (!parse_int64(value, &n) || n < 0) {
      return bad_param(name, "needs a non-negative integer, got '" + shown + "'");
    } else if (name == "min_observations") {
      r->model.min_observations = static_cast<uint64_t>(n);
    } else if (name == "max_leaves") {
      r->model.max_leaves = static_cast<size_t>(n);
    } else if (name == "depth") {
      if (n < 1 || n > kMaxDepth)
        return bad_param(name, "needs 1 to 4 (operation, caller, stack, trace)");
      r->depth = n;
    } else if (name == "max_nodes") {
      if (n < 1 || n > static_cast<int64_t>(kMaxTreeNodes))
        return bad_param(name, "needs 1 to 5000");
      r->max_nodes = static_cast<size_t>(n);
    }
  }
  return std::nullopt;
}

const char* level_name(int level) {
  return level < 0 ? "root" : analysis::to_string(static_cast<analysis::ContextLevel>(level));
}

json model_json(const analysis::ContextModelSummary& m) {
  return {{"level", "model"},
          {"contexts", m.entities},
          {"leaves", m.leaves},
          {"linked_leaves", m.linked_leaves},
          {"observations_per_context",
           m.entities ? static_cast<double>(m.observations) / static_cast<double>(m.entities) : 0},
          {"weighted_sd_ns", m.weighted_sd},
          {"sd_reduction_percent", m.reduction_percent},
          {"bimodal_percent", m.bimodal_percent}};
}

json log_json(const analysis::ContextLog& log) {
  const analysis::ContextData& d = log.data;
  return {{"records", log.read.records},
          {"errors", log.read.errors},
          {"traces", d.traces},
          {"skipped_traces", d.skipped_traces},
          {"shapes", d.shapes.size()},
          {"executions", d.observations.size()},
          {"operations", d.operations.size()}};
}

json options_json(const analysis::ContextTreeOptions& o, const analysis::ContextOperatorCounts& c) {
  return {{"min_observations", o.min_observations},
          {"similarity", o.similarity},
          {"max_leaves", o.max_leaves},
          {"removed", c.removed},
          {"linked", c.linked},
          {"merged", c.merged}};
}

json node_json(const analysis::ContextData& data, const analysis::ContextTree& tree, int32_t id,
               size_t live_children) {
  json j = analysis::context_node_json(data, tree, id);
  j["children"] = live_children;
  return j;
}

}  // namespace

ContextModels::ContextModels(std::string log_path) : log_path_(std::move(log_path)) {}
ContextModels::~ContextModels() = default;

std::shared_ptr<const ContextModels::Loaded> ContextModels::load(uint64_t generation) {
  std::lock_guard lock(mutex_);
  if (loaded_ && loaded_->generation == generation) return loaded_;
  auto l = std::make_shared<Loaded>();
  l->generation = generation;
  l->log = analysis::read_context_log(log_path_);
  l->index = std::make_unique<analysis::ContextIndex>(l->log.data);
  l->levels = analysis::summarize_levels(l->log.data, *l->index);
  loaded_ = std::move(l);
  return loaded_;
}

ApiResponse ContextModels::summary(const QueryParams& params, uint64_t generation) {
  TreeRequest req;
  if (auto e = parse_request(params, false, &req)) return api_error(400, e->message, e->parameter);
  const auto loaded = load(generation);
  const analysis::ContextData& data = loaded->log.data;
  analysis::ContextTree tree(data, *loaded->index);
  const analysis::ContextOperatorCounts counts = tree.apply_operators(req.model);
  json levels = json::array();
  for (int l = 0; l < analysis::kContextLevels; ++l) {
    levels.push_back(
        analysis::context_level_json(level_name(l), loaded->levels.levels[static_cast<size_t>(l)]));
  }
  levels.push_back(model_json(tree.summarize()));
  json ops = json::array();
  for (const analysis::OperationContextStats& s : loaded->levels.operations) {
    const analysis::ContextModelSummary m = tree.summarize(s.op);
    ops.push_back({{"operation", data.operations[s.op]},
                   {"executions", s.levels[0].observations},
                   {"sd_ns", s.levels[0].weighted_sd},
                   {"bimodality", s.bimodality},
                   {"caller_contexts", s.levels[1].contexts},
                   {"stack_contexts", s.levels[2].contexts},
                   {"trace_contexts", s.levels[3].contexts},
                   {"model_contexts", m.entities},
                   {"caller_reduction_percent", s.levels[1].reduction_percent},
                   {"stack_reduction_percent", s.levels[2].reduction_percent},
                   {"trace_reduction_percent", s.levels[3].reduction_percent},
                   {"model_reduction_percent", m.reduction_percent}});
  }
  std::stable_sort(ops.begin(), ops.end(), [](const json& a, const json& b) {
    return a["executions"].get<uint64_t>() > b["executions"].get<uint64_t>();
  });
  return api_ok({{"log", log_json(loaded->log)},
                 {"model", options_json(req.model, counts)},
                 {"levels", levels},
                 {"operations", ops}});
}

ApiResponse ContextModels::tree(const QueryParams& params, uint64_t generation) {
  TreeRequest req;
  if (auto e = parse_request(params, true, &req)) return api_error(400, e->message, e->parameter);
  const auto loaded = load(generation);
  const analysis::ContextData& data = loaded->log.data;
  analysis::ContextTree tree(data, *loaded->index);
  const analysis::ContextOperatorCounts counts = tree.apply_operators(req.model);
  if (tree.nodes().empty()) {
    return api_ok({{"log", log_json(loaded->log)}, {"nodes", json::array()}, {"total_nodes", 0}});
  }
  // Start at the root, or at the operation's node.
  int32_t start = 0;
  if (!req.operation.empty()) {
    start = -1;
    for (int32_t c : tree.live_children(0)) {
      const auto& n = tree.nodes()[static_cast<size_t>(c)];
      if (data.operations[n.context] == req.operation) start = c;
    }
    if (start < 0) {
      return api_error(404, "no operation '" + req.operation.substr(0, 256) + "' in the log",
                       "operation");
    }
  }
  size_t total = 0;  // live nodes under start (inclusive)
  json nodes = json::array();
  size_t cut_by_depth = 0, cut_by_size = 0;
  // Depth first, biggest subtree first, so a size cut drops the small ones.
  std::vector<int32_t> stack = {start};
  while (!stack.empty()) {
    const int32_t id = stack.back();
    stack.pop_back();
    ++total;
    std::vector<int32_t> kids = tree.live_children(id);
    if (nodes.size() >= req.max_nodes) {
      ++cut_by_size;
    } else if (tree.nodes()[static_cast<size_t>(id)].level >= req.depth) {
      ++cut_by_depth;
    } else {
      nodes.push_back(node_json(data, tree, id, kids.size()));
    }
    std::sort(kids.begin(), kids.end(), [&tree](int32_t a, int32_t b) {
      return tree.nodes()[static_cast<size_t>(a)].n < tree.nodes()[static_cast<size_t>(b)].n;
    });
    stack.insert(stack.end(), kids.begin(), kids.end());
  }
  return api_ok({{"log", log_json(loaded->log)},
                 {"model", options_json(req.model, counts)},
                 {"operation", req.operation},
                 {"depth", req.depth},
                 {"max_nodes", req.max_nodes},
                 {"total_nodes", total},
                 {"shown_nodes", nodes.size()},
                 {"omitted_by_depth", cut_by_depth},
                 {"omitted_by_size", cut_by_size},
                 {"nodes", nodes}});
}

}  // namespace sonde::serve
