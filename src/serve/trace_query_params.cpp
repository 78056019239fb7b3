#include "serve/trace_query_params.hpp"

#include <charconv>
#include <set>

namespace sonde::serve {

bool parse_int64(const std::string& text, int64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

namespace {

constexpr size_t kMaxTextParam = 4096;

ParamError bad(const std::string& name, const std::string& what) {
  return {name, "parameter '" + name + "': " + what};
}

}  // namespace

std::variant<store::TraceQuery, ParamError> parse_trace_query(
    const std::multimap<std::string, std::string>& params) {
  static const std::set<std::string> known = {"operation", "host",  "min_ns", "max_ns",
                                              "from",      "to",    "failed", "invalid",
                                              "order",     "limit", "offset", "exact"};
  store::TraceQuery q;
  for (const auto& [name, value] : params) {
    if (!known.contains(name)) return bad(name, "unknown parameter");
    if (params.count(name) > 1) return bad(name, "given more than once");
    if (value.size() > kMaxTextParam) return bad(name, "longer than 4096 bytes");
    int64_t n = 0;
    if (name == "operation") {
      q.filter.operation = value;
    } else if (name == "host") {
      q.filter.host = value;
    } else if (name == "min_ns" || name == "max_ns" || name == "limit" || name == "offset") {
      if (!parse_int64(value, &n) || n < 0) {
        return bad(name, "needs a non-negative integer, got '" + value.substr(0, 64) + "'");
      }
      if (name == "min_ns") q.filter.min_duration = n;
      if (name == "max_ns") q.filter.max_duration = n;
      if (name == "offset") q.offset = static_cast<size_t>(n);
      if (name == "limit") {
        if (n > static_cast<int64_t>(kMaxTraceLimit)) return bad(name, "at most 1000");
        q.limit = static_cast<size_t>(n);
      }
    } else if (name == "from" || name == "to") {
      if (!parse_int64(value, &n)) {
        return bad(name, "needs a time in ns since the epoch, got '" + value.substr(0, 64) + "'");
      }
      (name == "from" ? q.from_ns : q.to_ns) = n;
    } else if (name == "failed") {
      if (value != "true" && value != "false") return bad(name, "needs true or false");
      q.filter.only_failed = value == "true";
    } else if (name == "invalid") {
      // exclude (default): valid traces only; include: both; only: invalid ones.
      if (value != "exclude" && value != "include" && value != "only") {
        return bad(name, "needs exclude, include or only");
      }
      q.filter.include_invalid = value == "include";
      q.filter.only_invalid = value == "only";
    } else if (name == "exact") {
      // true: count every match, however long it takes (the embedded store
      // otherwise estimates past TraceQuery::exact_count_traces).
      if (value != "true" && value != "false") return bad(name, "needs true or false");
      if (value == "true") q.exact_count_traces = 0;
    } else if (name == "order") {
      if (value != "start" && value != "duration") return bad(name, "needs start or duration");
      q.order = value == "start" ? analysis::TraceOrder::kStart : analysis::TraceOrder::kLongest;
    }
  }
  if (q.filter.max_duration >= 0 && q.filter.max_duration < q.filter.min_duration) {
    return bad("max_ns", "smaller than min_ns");
  }
  if (q.to_ns < q.from_ns) return bad("to", "earlier than from");
  return q;
}

}  // namespace sonde::serve
