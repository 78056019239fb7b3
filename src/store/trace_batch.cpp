#include "store/trace_batch.hpp"

#include <zstd.h>

#include <algorithm>
#include <limits>

#include "format/varint.hpp"

namespace sonde::store {

namespace {

// kRelativeIds: the trace id is written relative to the previous entry's,
// the parent's relative to the trace's own (about 14 of an entry's 31
// bytes fewer for zstd to compress: a writer's ids are close to the
// previous trace's, and a root trace is its own parent). Every entry
// written since 2026-12-07 sets it; older rows hold absolute ids.
// kExecutionsFromStart: the packed executions' first entry time is
// relative to the entry's start (usually 0: 1 byte instead of 9).
constexpr uint64_t kValid = 1, kHasProblem = 2, kRelativeIds = 4, kExecutionsFromStart = 8,
                   kKnownTraceFlags = kValid | kHasProblem | kRelativeIds | kExecutionsFromStart;
// Decompressed BLOBs larger than this are not ours (a damaged row).
constexpr size_t kMaxUnpackedBytes = size_t{1} << 30;
// About 1 % false positives at 10 bits per trace and 7 probes.
constexpr size_t kBloomBitsPerTrace = 10;
constexpr int kBloomProbes = 7;
// The compression scratch kept between rows, at most (a row is usually
// about 120 KiB unpacked).
constexpr size_t kLargestKeptScratchBytes = size_t{4} << 20;

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <typename Visit>
void bloom_probes(int64_t trace_id, size_t bits, Visit visit) {
  const uint64_t h1 = mix(static_cast<uint64_t>(trace_id));
  const uint64_t h2 = mix(h1) | 1;
  for (int i = 0; i < kBloomProbes; ++i) visit((h1 + static_cast<uint64_t>(i) * h2) % bits);
}

// Into `scratch`, kept from row to row: a fresh bound-sized string per
// BLOB was zero-filled and, past malloc's mmap threshold, page-faulted in
// every time (about 3 % of the collector's profile); the row gets a copy
// of just the compressed bytes.
std::string compress(const std::string& raw, ZSTD_CCtx* context, std::string& scratch) {
  const size_t bound = ZSTD_compressBound(raw.size());
  if (scratch.size() < bound) scratch.resize(bound);
  const size_t n =
      context == nullptr
          ? ZSTD_compress(scratch.data(), bound, raw.data(), raw.size(), 1)
          : ZSTD_compressCCtx(context, scratch.data(), bound, raw.data(), raw.size(), 1);
  // Cannot fail with a bound-sized buffer and a valid level; keep it safe.
  if (ZSTD_isError(n)) return raw;
  return std::string(scratch.data(), n);
}

}  // namespace

void TraceBatchBuilder::add(const BatchEntry& e, std::string_view packed_executions) {
  using format::put_varint_raw;
  using format::zigzag;
  const bool problem = !e.problem.empty();
  // Twelve values, written through a pointer into room for their longest.
  const size_t start = entries_.size();
  entries_.resize(start + 12 * format::kMaxVarintBytes);
  char* p = entries_.data() + start;
  const bool from_start = e.executions_base == e.start;
  p = put_varint_raw(p, (e.valid ? kValid : 0) | (problem ? kHasProblem : 0) | kRelativeIds |
                            (from_start ? kExecutionsFromStart : 0));
  p = put_varint_raw(p, zigzag(format::wrapping_sub(e.trace_id, previous_trace_id_)));
  previous_trace_id_ = e.trace_id;
  p = put_varint_raw(p, zigzag(format::wrapping_sub(e.start, previous_start_)));
  previous_start_ = e.start;
  p = put_varint_raw(p, zigzag(e.duration));
  p = put_varint_raw(p, e.root);
  p = put_varint_raw(p, e.host);
  p = put_varint_raw(p, zigzag(e.thread_id));
  p = put_varint_raw(p, zigzag(format::wrapping_sub(e.parent_trace_id, e.trace_id)));
  p = put_varint_raw(p, e.executions);
  p = put_varint_raw(p, e.failed);
  p = put_varint_raw(p, zigzag(e.client));
  p = put_varint_raw(p, packed_executions.size());
  entries_.resize(static_cast<size_t>(p - entries_.data()));
  if (problem) format::put_str(entries_, e.problem);
  executions_.append(packed_executions);

  BatchRow& r = row_;
  const bool first = r.all.traces == 0;
  const bool first_valid = r.all.traces == r.all.invalid;
  r.min_trace_id = first ? e.trace_id : std::min(r.min_trace_id, e.trace_id);
  r.max_trace_id = first ? e.trace_id : std::max(r.max_trace_id, e.trace_id);
  if (e.valid) {
    r.valid_first_start = first_valid ? e.start : std::min(r.valid_first_start, e.start);
    r.valid_last_start = first_valid ? e.start : std::max(r.valid_last_start, e.start);
    r.valid_executions += e.executions;
  }
  r.all.add(e.start, e.duration, e.valid);
  trace_ids_.push_back(e.trace_id);

  auto [at, added] = root_at_.try_emplace(e.root, r.roots.size());
  if (added) r.roots.push_back(BatchRootSummary{e.root, {}});
  r.roots[at->second].bounds.add(e.start, e.duration, e.valid);
}

void TraceBounds::add(int64_t start, int64_t duration, bool valid) {
  merge({1, valid ? 0 : 1, start, start, duration, duration});
}

void TraceBounds::merge(const TraceBounds& o) {
  if (o.traces == 0) return;
  const bool first = traces == 0;
  first_start = first ? o.first_start : std::min(first_start, o.first_start);
  last_start = first ? o.last_start : std::max(last_start, o.last_start);
  min_duration = first ? o.min_duration : std::min(min_duration, o.min_duration);
  max_duration = first ? o.max_duration : std::max(max_duration, o.max_duration);
  traces += o.traces;
  invalid += o.invalid;
}

std::vector<TraceIdSpan> trace_id_spans(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  std::vector<TraceIdSpan> spans;
  for (const int64_t id : ids) {
    // Unsigned: the distance of two sorted int64s always fits, even from
    // INT64_MIN to INT64_MAX.
    if (!spans.empty() &&
        static_cast<uint64_t>(id) - static_cast<uint64_t>(spans.back().lo) <= kIdSpanWidth) {
      spans.back().hi = id;
    } else {
      spans.push_back({id, id});
    }
  }
  return spans;
}

int64_t lowest_span_start(int64_t trace_id) {
  constexpr int64_t kWidth = static_cast<int64_t>(kIdSpanWidth);
  return trace_id < std::numeric_limits<int64_t>::min() + kWidth
             ? std::numeric_limits<int64_t>::min()
             : trace_id - kWidth;
}

void TraceBatchBuilder::CompressorFree::operator()(ZSTD_CCtx* context) const {
  ZSTD_freeCCtx(context);
}

BatchRow TraceBatchBuilder::take() {
  // Out of memory for the context: each call makes its own, as before.
  if (!compressor_) compressor_.reset(ZSTD_createCCtx());
  BatchRow row = std::move(row_);
  row.entries = compress(entries_, compressor_.get(), compressed_);
  row.executions = compress(executions_, compressor_.get(), compressed_);
  const size_t bits = std::max<size_t>(64, (trace_ids_.size() * kBloomBitsPerTrace + 7) / 8 * 8);
  row.bloom.assign(bits / 8, '\0');
  for (int64_t id : trace_ids_) {
    bloom_probes(id, bits, [&row](uint64_t bit) {
      row.bloom[bit / 8] = static_cast<char>(row.bloom[bit / 8] | (1 << (bit % 8)));
    });
  }
  std::sort(row.roots.begin(), row.roots.end(),
            [](const BatchRootSummary& a, const BatchRootSummary& b) { return a.root < b.root; });
  row.id_spans = trace_id_spans(std::move(trace_ids_));
  row_ = BatchRow{};
  entries_.clear();
  executions_.clear();
  trace_ids_.clear();
  root_at_.clear();
  previous_start_ = 0;
  previous_trace_id_ = 0;
  // A huge row's room is not kept for the writer's life.
  if (compressed_.size() > kLargestKeptScratchBytes) compressed_ = {};
  return row;
}

bool batch_may_hold(std::string_view bloom, int64_t trace_id) {
  if (bloom.empty()) return true;
  const size_t bits = bloom.size() * 8;
  bool all = true;
  bloom_probes(trace_id, bits, [&](uint64_t bit) {
    if ((static_cast<uint8_t>(bloom[bit / 8]) & (1 << (bit % 8))) == 0) all = false;
  });
  return all;
}

std::string unpack_batch_blob(std::string_view compressed, std::string& raw) {
  const unsigned long long size = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return "not a zstd frame";
  }
  if (size > kMaxUnpackedBytes) return "claims " + std::to_string(size) + " bytes unpacked";
  raw.resize(static_cast<size_t>(size));
  const size_t n = ZSTD_decompress(raw.data(), raw.size(), compressed.data(), compressed.size());
  if (ZSTD_isError(n) || n != raw.size()) return "does not decompress";
  return "";
}

std::string unpack_batch_entries(std::string_view compressed, std::string& raw,
                                 std::vector<BatchEntry>& out) {
  out.clear();
  if (std::string e = unpack_batch_blob(compressed, raw); !e.empty()) return "entries " + e;
  const auto* begin = reinterpret_cast<const uint8_t*>(raw.data());
  format::ByteCursor in{begin, begin + raw.size()};
  int64_t previous_start = 0;
  int64_t previous_trace_id = 0;
  size_t executions_offset = 0;
  while (!in.at_end()) {
    const size_t at = static_cast<size_t>(in.p - begin);
    BatchEntry e;
    const uint64_t flags = in.varint();
    if (in.ok && (flags & ~kKnownTraceFlags) != 0) {
      return "entries: unknown flags " + std::to_string(flags) + " at byte " + std::to_string(at);
    }
    e.valid = (flags & kValid) != 0;
    const bool relative = (flags & kRelativeIds) != 0;
    e.trace_id = in.svarint();
    if (relative) e.trace_id = format::wrapping_add(previous_trace_id, e.trace_id);
    previous_trace_id = e.trace_id;
    e.start = format::wrapping_add(previous_start, in.svarint());
    previous_start = e.start;
    e.duration = in.svarint();
    e.root = in.varint();
    e.host = in.varint();
    e.thread_id = in.svarint();
    e.parent_trace_id = in.svarint();
    if (relative) e.parent_trace_id = format::wrapping_add(e.trace_id, e.parent_trace_id);
    e.executions = static_cast<uint32_t>(in.varint());
    e.failed = static_cast<uint32_t>(in.varint());
    e.client = in.svarint();
    e.executions_size = static_cast<size_t>(in.varint());
    e.executions_base = (flags & kExecutionsFromStart) != 0 ? e.start : 0;
    if ((flags & kHasProblem) != 0) e.problem = in.str();
    if (!in.ok) return "entries: truncated at byte " + std::to_string(at);
    e.executions_offset = executions_offset;
    executions_offset += e.executions_size;
    out.push_back(e);
  }
  return "";
}

analysis::TraceEntry to_trace_entry(const BatchEntry& e,
                                    const std::function<const std::string*(uint64_t)>& name_of) {
  analysis::TraceEntry t;
  t.trace_id = e.trace_id;
  if (const std::string* root = name_of(e.root)) t.root_operation = *root;
  if (const std::string* host = name_of(e.host)) t.host = *host;
  t.thread_id = e.thread_id;
  t.parent_trace_id = e.parent_trace_id;
  t.start = e.start;
  t.duration = e.duration;
  t.executions = e.executions;
  t.failed = e.failed;
  t.valid = e.valid;
  t.problem = std::string(e.problem);
  return t;
}

const std::string* IndexNames::get(SqliteDb& db, uint64_t id) {
  // Names only grow: read the new ones when an id is past what we have.
  if (id >= names_.size()) {
    SqliteStatement more(db, "SELECT id, text FROM names WHERE id >= ?1 ORDER BY id");
    more.bind(1, static_cast<int64_t>(names_.size()));
    while (more.ok() && more.step()) {
      const auto at = static_cast<uint64_t>(more.int64(0));
      if (at >= (uint64_t{1} << 32)) break;  // not an id the writer makes: stays unknown
      if (names_.size() <= at) names_.resize(at + 1);
      names_[at] = more.text(1);
    }
  }
  return id < names_.size() ? &names_[id] : nullptr;
}

}  // namespace sonde::store
