// What scoring an execution against a saved calling-context model needs
// (`sonde context --save-model`, docs/formats/context-model.md): for every
// trace context the model saw, the robust fence of the model entity it is
// tested in. The score is the one `sonde context --anomalies` lists:
//   score = (duration - Q3) / max(IQR, 5 % of the median, 1 ns)
// Here, in the format layer, because libsonde's flight recorder scores
// finished traces with it and cannot link the analysis layer, which reads
// the whole model (analysis/context/context_baseline.hpp) for its rank tests.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace sonde::format {

// A saved model's `format` (docs/formats/context-model.md). Version 1
// named a native log's operations in Kieker's form, version 2 as C++
// writes them (docs/formats/operation-names.md).
inline constexpr const char* kContextModelFormat = "sonde-context-model/2";

// Why a model whose `format` is `format` is refused: "" for the current
// one; for version 1, how to save it again.
std::string context_model_format_error(const std::string& format);

struct ContextFence {
  double q3 = 0;        // ns
  double scale = 1;     // max(IQR, 5 % of the median, 1), ns
  uint32_t entity = 0;  // index of the entity's reference in the model's `references`
};

inline ContextFence make_context_fence(double q1, double median, double q3, uint32_t entity) {
  const double iqr = q3 - q1;
  double scale = iqr > 0.05 * median ? iqr : 0.05 * median;
  if (scale < 1) scale = 1;
  return {q3, scale, entity};
}

inline double context_score(const ContextFence& f, double duration_ns) {
  return (duration_ns - f.q3) / f.scale;
}

struct ContextFences {
  std::unordered_map<uint64_t, ContextFence> by_trace_context;  // context_key::trace
  std::string source;                                           // the log the model was built from
};

// Reads a saved model's fences. Returns "" or the problem (not JSON, other
// format tag, a missing or mistyped field, a key that is not 16 hex
// digits, a reference index out of range), without the path.
std::string read_context_fences(const std::string& path, ContextFences* out);

}  // namespace sonde::format
