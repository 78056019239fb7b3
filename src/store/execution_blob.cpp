#include "store/execution_blob.hpp"

#include <cmath>

#include "format/varint.hpp"

namespace sonde::store {

namespace {

constexpr uint64_t kFailed = 1, kNoExit = 2, kKnownExecutionFlags = kFailed | kNoExit;

}  // namespace

void pack_executions(std::span<const analysis::Execution> executions,
                     const std::function<uint64_t(std::string_view)>& name_id, std::string& out,
                     std::vector<uint64_t>* operation_ids, int64_t base_tin) {
  using format::put_varint_raw;
  using format::zigzag;
  const auto id = [&name_id](std::string_view s) -> uint64_t { return s.empty() ? 0 : name_id(s); };
  // Room for every value at its longest, written through a pointer, then
  // cut to what was written.
  constexpr size_t kMostBytesPerExecution = 9 * format::kMaxVarintBytes;
  const size_t start = out.size();
  out.resize(start + executions.size() * kMostBytesPerExecution);
  char* p = out.data() + start;
  int64_t previous_tin = base_tin;
  // A trace's executions share one host view: its id is asked for once per
  // run of the same view (the views stay valid and unchanged during the
  // call, so the same address and size is the same text; the initial empty
  // view's id is 0, as any empty host's).
  std::string_view host;
  uint64_t host_id = 0;
  for (const analysis::Execution& e : executions) {
    const bool no_exit = e.tout < 0;
    p = put_varint_raw(p, (e.failed ? kFailed : 0) | (no_exit ? kNoExit : 0));
    const uint64_t operation = id(e.operation);
    if (operation_ids != nullptr) operation_ids->push_back(operation);
    p = put_varint_raw(p, operation);
    p = put_varint_raw(p, id(e.component));
    if (e.host.data() != host.data() || e.host.size() != host.size()) {
      host = e.host;
      host_id = id(e.host);
    }
    p = put_varint_raw(p, host_id);
    p = put_varint_raw(p, zigzag(e.eoi));
    p = put_varint_raw(p, zigzag(e.ess));
    p = put_varint_raw(p, zigzag(format::wrapping_sub(e.tin, previous_tin)));
    previous_tin = e.tin;
    if (!no_exit) p = put_varint_raw(p, zigzag(format::wrapping_sub(e.tout, e.tin)));
    if (e.failed) p = put_varint_raw(p, id(e.cause));
  }
  out.resize(static_cast<size_t>(p - out.data()));
}

std::string unpack_executions(std::string_view blob,
                              const std::function<const std::string*(uint64_t)>& name_of,
                              std::vector<StoredExecution>& out, int64_t base_tin) {
  const auto* begin = reinterpret_cast<const uint8_t*>(blob.data());
  format::ByteCursor in{begin, begin + blob.size()};
  const auto offset = [&] { return std::to_string(in.p - begin); };
  std::string problem;
  const auto name = [&](std::string& into) {
    const size_t at = static_cast<size_t>(in.p - begin);
    const uint64_t id = in.varint();
    if (!in.ok || id == 0) return;
    if (const std::string* text = name_of(id)) {
      into = *text;
    } else if (problem.empty()) {
      problem = "unknown name id " + std::to_string(id) + " at byte " + std::to_string(at);
    }
  };
  int64_t previous_tin = base_tin;
  while (!in.at_end() && problem.empty()) {
    const size_t start = static_cast<size_t>(in.p - begin);
    StoredExecution e;
    const uint64_t flags = in.varint();
    if (in.ok && (flags & ~kKnownExecutionFlags) != 0) {
      return "unknown flags " + std::to_string(flags) + " at byte " + std::to_string(start);
    }
    name(e.operation);
    name(e.component);
    name(e.host);
    e.eoi = static_cast<int32_t>(in.svarint());
    e.ess = static_cast<int32_t>(in.svarint());
    e.tin = format::wrapping_add(previous_tin, in.svarint());
    previous_tin = e.tin;
    e.tout = (flags & kNoExit) != 0 ? -1 : format::wrapping_add(e.tin, in.svarint());
    e.failed = (flags & kFailed) != 0;
    if (e.failed) name(e.cause);
    if (!in.ok) {
      return "truncated execution " + std::to_string(out.size()) + " (starts at byte " +
             std::to_string(start) + ", data ends at byte " + offset() + ")";
    }
    out.push_back(std::move(e));
  }
  return problem;
}

void pack_reduced_executions(std::span<const analysis::ReducedExecution> positions,
                             const std::function<uint64_t(std::string_view)>& name_id,
                             std::string& out) {
  const auto id = [&name_id](std::string_view s) -> uint64_t { return s.empty() ? 0 : name_id(s); };
  const auto rounded = [](double v) { return static_cast<int64_t>(std::llround(v)); };
  for (const analysis::ReducedExecution& p : positions) {
    format::put_varint(out, id(p.operation));
    format::put_varint(out, id(p.component));
    format::put_varint(out, format::zigzag(p.eoi));
    format::put_varint(out, format::zigzag(p.ess));
    format::put_varint(out, format::zigzag(rounded(p.mean_offset)));
    format::put_varint(out, format::zigzag(rounded(p.mean_duration)));
    format::put_varint(out, format::zigzag(p.min_duration));
    format::put_varint(out, format::zigzag(p.max_duration));
    format::put_varint(out, p.failed);
  }
}

std::string unpack_reduced_executions(std::string_view blob,
                                      const std::function<const std::string*(uint64_t)>& name_of,
                                      std::vector<analysis::ReducedExecution>& out) {
  const auto* begin = reinterpret_cast<const uint8_t*>(blob.data());
  format::ByteCursor in{begin, begin + blob.size()};
  while (!in.at_end()) {
    const size_t start = static_cast<size_t>(in.p - begin);
    analysis::ReducedExecution p;
    for (std::string* into : {&p.operation, &p.component}) {
      const size_t at = static_cast<size_t>(in.p - begin);
      const uint64_t id = in.varint();
      if (!in.ok || id == 0) continue;
      const std::string* text = name_of(id);
      if (!text) return "unknown name id " + std::to_string(id) + " at byte " + std::to_string(at);
      *into = *text;
    }
    p.eoi = static_cast<int32_t>(in.svarint());
    p.ess = static_cast<int32_t>(in.svarint());
    p.mean_offset = static_cast<double>(in.svarint());
    p.mean_duration = static_cast<double>(in.svarint());
    p.min_duration = in.svarint();
    p.max_duration = in.svarint();
    p.failed = in.varint();
    if (!in.ok) {
      return "truncated position " + std::to_string(out.size()) + " (starts at byte " +
             std::to_string(start) + ")";
    }
    out.push_back(std::move(p));
  }
  return "";
}

}  // namespace sonde::store
