// Small pieces the trace exporters (Chrome Trace Event JSON, OTLP JSON,
// flame graphs) share: a plain Trace seen as a one-part StitchedTrace, the
// label an execution is shown under, and text made safe for JSON and XML.
#pragma once

#include <string>
#include <string_view>

#include "analysis/model/stitched_trace.hpp"
#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

// A trace nobody continued, as the stitcher would deliver it. Copies the
// executions; the strings still point into the reconstructor's pool.
StitchedTrace one_part_stitched_trace(const Trace& trace);

// Feeds every valid trace to a StitchedTraceSink as a one-part
// StitchedTrace: the exporters' input when no stitcher is in the pipeline.
// Invalid traces are not exported.
class OnePartStitchedTraceSink : public TraceSink {
 public:
  explicit OnePartStitchedTraceSink(StitchedTraceSink& out) : out_(out) {}
  void on_trace(const Trace& trace) override;
  void on_invalid_trace(const InvalidTrace&) override {}

 private:
  StitchedTraceSink& out_;
};

// What an execution is called in exported views: "Catalog.getBook(..)" (or
// "Tpl<int>::name(..)" for C++ signatures) with short labels (short class
// name + short operation label), else the operation signature as recorded.
// Never empty ("[unknown]").
std::string execution_label(const Execution& execution, bool short_labels);

// `text` as a JSON string literal, quotes included (valid UTF-8, control
// characters escaped).
std::string json_quote(std::string_view text);

}  // namespace sonde::analysis
