// The live view of `sonde serve DIR` while `sonde collect --out DIR` writes
// DIR (docs/serve.md):
//   GET /api/live?after=CURSOR&limit=N
//       the collector's clients and totals from DIR/collect-stats.json
//       (rewritten by the collector at every commit), and the traces indexed
//       after CURSOR (0: from the start), newest first, at most N (default
//       50, at most 500), with their count and the next cursor.
// Any other served thing has no live view: the endpoint answers 404.
#pragma once

#include <string>

#include "serve/api.hpp"
#include "serve/live_index.hpp"

namespace sonde::serve {

// Whether `path` is a directory a collector writes (holds collect-stats.json).
bool is_collector_dir(const std::string& path);

class LiveView {
 public:
  explicit LiveView(std::string dir);
  ApiResponse answer(const QueryParams& params);

 private:
  std::string dir_;
  std::string stats_file_;
  LiveIndex index_;
};

}  // namespace sonde::serve
