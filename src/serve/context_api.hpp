// The calling-context views of `sonde serve` (docs/serve.md):
//   GET /api/context?min_observations=&similarity=&max_leaves=
//       per level (operation, caller, stack, trace, model): contexts,
//       observations per context, weighted σ, σ reduction; per operation
//       the same reductions; the operators the model applied
//   GET /api/context/tree?…&operation=&depth=&max_nodes=
//       the calling-context tree, largest subtrees first, cut at `depth`
//       levels below the root and `max_nodes` nodes (the answer counts what
//       was left out)
// Both run the analysis code behind `sonde context` (src/analysis/context_*)
// over the served log. The log is read once per store generation (so a
// growing log is re-read when the store was), the tree is built per request.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "serve/api.hpp"

namespace sonde::serve {

class ContextModels {
 public:
  explicit ContextModels(std::string log_path);
  ~ContextModels();
  ContextModels(const ContextModels&) = delete;
  ContextModels& operator=(const ContextModels&) = delete;

  // `generation` is the store's: a new one means the log changed.
  ApiResponse summary(const QueryParams& params, uint64_t generation);
  ApiResponse tree(const QueryParams& params, uint64_t generation);

 private:
  struct Loaded;
  std::shared_ptr<const Loaded> load(uint64_t generation);

  std::string log_path_;
  std::mutex mutex_;
  std::shared_ptr<const Loaded> loaded_;
};

}  // namespace sonde::serve
