#include "analysis/context/context_baseline.hpp"

#include <algorithm>
#include <charconv>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "analysis/context/context_tree_dot.hpp"
#include "format/context_key.hpp"

namespace sonde::analysis {
namespace {

using nlohmann::json;

using format::context_key::combine;
using format::context_key::kRootTag;

const char* level_name(ContextLevel l) { return to_string(l); }

ContextLevel parse_level(std::string_view name) {
  for (int l = 0; l < kContextLevels; ++l) {
    if (name == to_string(static_cast<ContextLevel>(l))) return static_cast<ContextLevel>(l);
  }
  throw std::runtime_error("unknown context level '" + std::string(name.substr(0, 40)) + "'");
}

std::string hex(uint64_t v) {
  char buf[17];
  for (int i = 15; i >= 0; --i, v >>= 4) buf[i] = "0123456789abcdef"[v & 15];
  buf[16] = '\0';
  return buf;
}

uint64_t parse_hex(const std::string& s) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || end != s.data() + s.size() || s.size() != 16) {
    throw std::runtime_error("context key '" + s.substr(0, 40) + "' is not 16 hex digits");
  }
  return v;
}

// Evenly spaced order statistics (midpoints of S equal slices).
std::vector<int64_t> spaced_sample(std::vector<int64_t> values, size_t size) {
  std::sort(values.begin(), values.end());
  if (values.size() <= size) return values;
  std::vector<int64_t> out(size);
  const double n = static_cast<double>(values.size());
  for (size_t k = 0; k < size; ++k) {
    out[k] =
        values[static_cast<size_t>((static_cast<double>(k) + 0.5) * n / static_cast<double>(size))];
  }
  return out;
}

const json& field(const json& obj, const char* name, const char* where) {
  if (!obj.is_object() || !obj.contains(name)) {
    throw std::runtime_error(std::string(where) + " has no '" + name + "'");
  }
  return obj.at(name);
}

template <typename T>
T number(const json& obj, const char* name, const char* where) {
  const json& v = field(obj, name, where);
  if (!v.is_number())
    throw std::runtime_error(std::string(where) + "." + name + " is not a number");
  if constexpr (std::is_unsigned_v<T>) {
    if (!v.is_number_unsigned()) {
      throw std::runtime_error(std::string(where) + "." + name + " is not a non-negative integer");
    }
  }
  return v.get<T>();
}

std::string text(const json& obj, const char* name, const char* where) {
  const json& v = field(obj, name, where);
  if (!v.is_string())
    throw std::runtime_error(std::string(where) + "." + name + " is not a string");
  return v.get<std::string>();
}

}  // namespace

ContextKeys::ContextKeys(const ContextData& data) {
  auto& op = keys[static_cast<size_t>(ContextLevel::kOperation)];
  auto& caller = keys[static_cast<size_t>(ContextLevel::kCaller)];
  auto& stack = keys[static_cast<size_t>(ContextLevel::kStack)];
  auto& trace = keys[static_cast<size_t>(ContextLevel::kTrace)];
  op.resize(data.operations.size());
  for (size_t i = 0; i < op.size(); ++i) op[i] = format::context_key::operation(data.operations[i]);
  caller.resize(data.caller_op.size());
  for (size_t c = 0; c < caller.size(); ++c) {
    const uint32_t of = data.caller_of[c];
    caller[c] = combine(combine(2, op[data.caller_op[c]]), of == kNoContext ? kRootTag : op[of]);
  }
  // A stack key chains its parent's key; resolve parents first (ids are
  // normally in pre-order, but nothing here relies on it).
  stack.assign(data.stack_op.size(), 0);
  std::vector<bool> done(stack.size(), false);
  std::vector<uint32_t> chain;
  for (uint32_t s = 0; s < stack.size(); ++s) {
    for (uint32_t x = s; x != kNoContext && !done[x]; x = data.stack_parent[x]) chain.push_back(x);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const uint32_t p = data.stack_parent[*it];
      stack[*it] =
          combine(combine(3, p == kNoContext ? kRootTag : stack[p]), op[data.stack_op[*it]]);
      done[*it] = true;
    }
    chain.clear();
  }
  std::vector<uint64_t> shape_key(data.shapes.size());
  std::vector<uint64_t> shape_ops;
  for (size_t sh = 0; sh < shape_key.size(); ++sh) {
    const TraceShape& shape = data.shapes[sh];
    shape_ops.clear();
    for (uint32_t o : shape.ops) shape_ops.push_back(op[o]);
    shape_key[sh] = format::context_key::trace_shape(shape_ops, shape.parent);
  }
  trace.resize(data.trace_stack.size());
  for (size_t t = 0; t < trace.size(); ++t) {
    trace[t] = format::context_key::trace(shape_key[data.trace_shape[t]],
                                          static_cast<size_t>(data.trace_position[t]));
  }
}

ContextBaseline make_baseline(const ContextData& data, const ContextIndex& index,
                              const ContextTree& tree, const ContextTreeOptions& options,
                              std::string source, size_t sample_size) {
  ContextBaseline b;
  b.source = std::move(source);
  b.executions = data.observations.size();
  b.traces = data.traces;
  b.options = options;
  b.sample_size = sample_size;
  const ContextKeys keys(data);
  std::unordered_map<int32_t, uint32_t> reference_of_node;
  auto reference = [&](int32_t id, uint32_t entity) {
    auto [it, inserted] =
        reference_of_node.try_emplace(id, static_cast<uint32_t>(b.references.size()));
    if (!inserted) return it->second;
    const ContextNode& n = tree.nodes()[static_cast<size_t>(id)];
    BaselineReference r;
    r.level = static_cast<ContextLevel>(n.level);
    r.entity = entity == kNoContext ? it->second : entity;
    r.operation = data.operations[tree.operation_of(id)];
    r.context = context_tree_label(data, n);
    r.n = n.n;
    r.median = n.quartiles.median;
    r.q1 = n.quartiles.q1;
    r.q3 = n.quartiles.q3;
    r.mean = n.mean;
    r.sd = n.sd;
    // Only leaves and operations are tested; an entity above its linked
    // leaves needs no sample of its own.
    if (tree.is_leaf(id) || n.level == 0) {
      std::vector<int64_t> values;
      values.reserve(n.n);
      for (uint32_t t : n.members) {
        const auto s = index.samples(ContextLevel::kTrace, t);
        values.insert(values.end(), s.begin(), s.end());
      }
      r.sample = spaced_sample(std::move(values), sample_size);
    }
    b.references.push_back(std::move(r));
    return it->second;
  };
  b.operation_names = data.operations;
  b.operation_reference.assign(data.operations.size(), 0);
  for (int32_t c : tree.live_children(0)) {
    b.operation_reference[tree.nodes()[static_cast<size_t>(c)].context] = reference(c, kNoContext);
  }
  for (int32_t leaf : tree.leaves()) {
    const uint32_t entity = reference(tree.entity(leaf), kNoContext);
    const uint32_t ref = reference(leaf, entity);
    for (uint32_t t : tree.nodes()[static_cast<size_t>(leaf)].members) {
      b.trace_contexts.push_back({keys.keys[static_cast<size_t>(ContextLevel::kTrace)][t], ref});
    }
  }
  return b;
}

namespace {

// Streamed, not built as a JSON document first: a model of a 2 M-execution
// log is ~50 MB of text, and a document of it would cost several times that.
std::string quoted(std::string_view s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}
std::string number_text(double v) { return json(v).dump(); }

void write_integers(std::ostream& out, const auto& values) {
  out << '[';
  char buf[24];
  for (size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out << ',';
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, values[i]);
    out.write(buf, end - buf);
  }
  out << ']';
}

}  // namespace

void write_baseline(std::ostream& out, const ContextBaseline& b) {
  out << "{\"format\":" << quoted(kContextModelFormat)
      << ",\n\"source\":{\"log\":" << quoted(b.source) << ",\"executions\":" << b.executions
      << ",\"traces\":" << b.traces
      << "},\n\"model\":{\"min_observations\":" << b.options.min_observations
      << ",\"similarity\":" << number_text(b.options.similarity)
      << ",\"max_leaves\":" << b.options.max_leaves << "},\n\"sample_size\":" << b.sample_size
      << ",\n\"operations\":[";
  for (size_t i = 0; i < b.operation_names.size(); ++i) {
    out << (i != 0 ? "," : "") << quoted(b.operation_names[i]);
  }
  out << "],\n\"operation_references\":";
  write_integers(out, b.operation_reference);
  out << ",\n\"references\":[";
  for (size_t i = 0; i < b.references.size(); ++i) {
    const BaselineReference& r = b.references[i];
    out << (i != 0 ? ",\n" : "\n") << "{\"level\":" << quoted(level_name(r.level))
        << ",\"entity\":" << r.entity << ",\"operation\":" << quoted(r.operation)
        << ",\"context\":" << quoted(r.context) << ",\"n\":" << r.n
        << ",\"median\":" << number_text(r.median) << ",\"q1\":" << number_text(r.q1)
        << ",\"q3\":" << number_text(r.q3) << ",\"mean\":" << number_text(r.mean)
        << ",\"sd\":" << number_text(r.sd) << ",\"sample\":";
    write_integers(out, r.sample);
    out << '}';
  }
  out << "],\n\"trace_contexts\":[";
  for (size_t i = 0; i < b.trace_contexts.size(); ++i) {
    const BaselineTraceContext& t = b.trace_contexts[i];
    out << (i != 0 ? "," : "") << (i % 8 == 0 ? "\n" : "") << "[\"" << hex(t.key) << "\","
        << t.reference << ']';
  }
  out << "]}\n";
}

ContextBaseline baseline_from_json(const json& doc) {
  if (!doc.is_object()) throw std::runtime_error("not a JSON object");
  const std::string format = text(doc, "format", "the model");
  if (std::string error = format::context_model_format_error(format); !error.empty())
    throw std::runtime_error(error);
  ContextBaseline b;
  const json& source = field(doc, "source", "the model");
  b.source = text(source, "log", "source");
  b.executions = number<uint64_t>(source, "executions", "source");
  b.traces = number<uint64_t>(source, "traces", "source");
  const json& model = field(doc, "model", "the model");
  b.options.min_observations = number<uint64_t>(model, "min_observations", "model");
  b.options.similarity = number<double>(model, "similarity", "model");
  b.options.max_leaves = number<size_t>(model, "max_leaves", "model");
  b.sample_size = number<size_t>(doc, "sample_size", "the model");

  const json& refs = field(doc, "references", "the model");
  if (!refs.is_array()) throw std::runtime_error("references is not an array");
  for (const json& r : refs) {
    BaselineReference x;
    x.level = parse_level(text(r, "level", "a reference"));
    const uint64_t entity = number<uint64_t>(r, "entity", "a reference");
    x.entity = static_cast<uint32_t>(std::min<uint64_t>(entity, UINT32_MAX));
    x.operation = text(r, "operation", "a reference");
    x.context = text(r, "context", "a reference");
    x.n = number<uint64_t>(r, "n", "a reference");
    x.median = number<double>(r, "median", "a reference");
    x.q1 = number<double>(r, "q1", "a reference");
    x.q3 = number<double>(r, "q3", "a reference");
    x.mean = number<double>(r, "mean", "a reference");
    x.sd = number<double>(r, "sd", "a reference");
    const json& sample = field(r, "sample", "a reference");
    if (!sample.is_array()) throw std::runtime_error("a reference's sample is not an array");
    for (const json& v : sample) {
      if (!v.is_number_integer())
        throw std::runtime_error("a reference's sample holds a non-integer");
      x.sample.push_back(v.get<int64_t>());
    }
    if (x.sample.size() > x.n) {
      throw std::runtime_error("a reference's sample has " + std::to_string(x.sample.size()) +
                               " values for n = " + std::to_string(x.n));
    }
    b.references.push_back(std::move(x));
  }
  const size_t n_refs = b.references.size();
  for (size_t i = 0; i < n_refs; ++i) {
    const uint32_t e = b.references[i].entity;
    if (e >= n_refs || b.references[e].entity != e) {
      throw std::runtime_error("reference " + std::to_string(i) +
                               " names an entity that does not exist or is not an entity");
    }
  }
  auto checked_ref = [n_refs](const json& v, const char* where) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() >= n_refs) {
      throw std::runtime_error(std::string(where) + " names a reference that does not exist");
    }
    return static_cast<uint32_t>(v.get<uint64_t>());
  };
  const json& ops = field(doc, "operations", "the model");
  const json& op_refs = field(doc, "operation_references", "the model");
  if (!ops.is_array() || !op_refs.is_array() || ops.size() != op_refs.size()) {
    throw std::runtime_error("operations and operation_references are not arrays of one length");
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].is_string()) throw std::runtime_error("an operation name is not a string");
    b.operation_names.push_back(ops[i].get<std::string>());
    b.operation_reference.push_back(checked_ref(op_refs[i], "operation_references"));
    if (b.references[b.operation_reference.back()].sample.empty()) {
      throw std::runtime_error("operation reference " + std::to_string(i) + " has no sample");
    }
  }
  const json& traces = field(doc, "trace_contexts", "the model");
  if (!traces.is_array()) throw std::runtime_error("trace_contexts is not an array");
  for (const json& t : traces) {
    if (!t.is_array() || t.size() != 2 || !t[0].is_string()) {
      throw std::runtime_error("a trace context is not [key, reference]");
    }
    b.trace_contexts.push_back(
        {parse_hex(t[0].get<std::string>()), checked_ref(t[1], "a trace context")});
    if (b.references[b.trace_contexts.back().reference].sample.empty()) {
      throw std::runtime_error("a trace context's reference has no sample");
    }
  }
  return b;
}

}  // namespace sonde::analysis
