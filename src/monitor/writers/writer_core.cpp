#include "monitor/writers/writer_core.hpp"

#include <algorithm>
#include <cstdio>

#include "monitor/registry.hpp"

namespace sonde::monitor {

using format::native::EventKind;

namespace {

// The W3C fields begin_trace writes after a trace's begin (and parent):
// returns the last of them, or `e` when there are none.
const RawEvent* take_w3c(const RawEvent* e, const RawEvent* end, format::w3c::Context& w3c) {
  while (e + 1 < end && kind_of(e[1].b) == RawKind::kW3c) {
    ++e;
    switch (payload_of(e->b)) {
      case kW3cTraceHigh:
        w3c.trace_id_high = e->a;
        break;
      case kW3cTraceLow:
        w3c.trace_id_low = e->a;
        break;
      case kW3cParentSpan:
        w3c.parent_span_id = e->a;
        break;
      default:
        break;
    }
  }
  return e;
}

}  // namespace

WriterCore::WriterCore(const Config& config, std::unique_ptr<EventWriter> writer,
                       ProcessInfo process)
    : config_(config), writer_(std::move(writer)), process_(std::move(process)) {}

std::string WriterCore::open() {
  calibration_.start();
  std::string err = writer_->open(process_);
  if (err.empty()) writer_->clock(calibration_);
  return err;
}

uint32_t WriterCore::function_op(uint64_t address) {
  // Calls repeat: a small direct-mapped cache saves the hash-map lookup.
  OpCacheEntry& slot = fn_cache_[(address >> 4) & (kOpCacheSize - 1)];
  if (slot.key == address) return slot.op;
  uint32_t op = function_op_slow(address);
  slot = {address, op};
  return op;
}

uint32_t WriterCore::function_op_slow(uint64_t address) {
  auto [it, inserted] = function_ops_.try_emplace(address, NamedOp{next_op_, {}, {}});
  if (!inserted) return it->second.op;
  ++next_op_;
  ++functions_seen_;
  if (!symbolizer_) symbolizer_ = std::make_unique<Symbolizer>();
  Symbol s = symbolizer_->resolve(address, config_.source_lines);
  OperationInfo op;
  op.id = it->second.op;
  op.name = s.name;
  op.kind = format::native::OperationKind::kFunction;
  op.module = s.module;
  op.address = s.offset;
  op.file = s.file;
  op.line = s.line;
  writer_->operation(op);
  it->second.name = std::move(op.name);
  it->second.module = std::move(op.module);
  return op.id;
}

const std::string* WriterCore::name_function(uint64_t address) {
  function_op(address);
  return function_name(address);
}

const std::string* WriterCore::function_name(uint64_t address) const {
  auto it = function_ops_.find(address);
  return it == function_ops_.end() ? nullptr : &it->second.name;
}

const std::string* WriterCore::function_module(uint64_t address) const {
  auto it = function_ops_.find(address);
  return it == function_ops_.end() ? nullptr : &it->second.module;
}

void WriterCore::forget_functions(uint64_t begin, uint64_t end) {
  std::erase_if(function_ops_, [&](const auto& kv) { return kv.first >= begin && kv.first < end; });
  for (OpCacheEntry& slot : fn_cache_)
    if (slot.key >= begin && slot.key < end) slot = {};
  symbolizer_.reset();
}

uint32_t WriterCore::manual_op(uint64_t id) {
  OpCacheEntry& slot = manual_cache_[id & (kOpCacheSize - 1)];
  if (slot.key == id + 1) return slot.op;
  uint32_t op = manual_op_slow(id);
  slot = {id + 1, op};
  return op;
}

uint32_t WriterCore::manual_op_slow(uint64_t id) {
  auto [it, inserted] = manual_ops_.try_emplace(id, next_op_);
  if (!inserted) return it->second;
  ++next_op_;
  ManualOperation m;
  OperationInfo op;
  op.id = it->second;
  op.kind = format::native::OperationKind::kManual;
  if (lookup_operation(static_cast<uint32_t>(id), &m)) {
    op.name = m.name;
    op.file = m.file;
    op.line = static_cast<uint32_t>(m.line);
  } else {
    op.name = "<unregistered operation " + std::to_string(id) + ">";
  }
  op.module = process_.executable;
  writer_->operation(op);
  return op.id;
}

void WriterCore::announce(ThreadChannel& ch) {
  // Per core: a flight-recorder snapshot is a log of its own.
  if (!announced_.insert(ch.index).second) return;
  writer_->thread({ch.index, ch.os_tid, ch.name});
}

void WriterCore::consume(ThreadChannel& ch, const RawEvent* begin, const RawEvent* end) {
  if (begin == end) return;
  if (!writer_->wants_events()) {
    count_only(begin, end);
    return;
  }
  announce(ch);
  consume_decoded(ch.index, decode_[ch.index], begin, end);
}

void WriterCore::consume_decoded(uint32_t thread, Decode& d, const RawEvent* begin,
                                 const RawEvent* end) {
  bool failed_before = writer_->failed();
  uint64_t probe_events = 0;
  if (format::NativeWriter* native = writer_->native_encoder()) {
    probe_events = encode_native(*native, thread, d, begin, end);
    if (failed_before) {
      native->discard_events();
    } else {
      native->end_events();
      writer_->flush(false);
    }
  } else {
    probe_events = decode(d, begin, end);
    if (!failed_before) writer_->events(thread, scratch_.data(), scratch_.size());
  }
  if (failed_before || writer_->failed()) {
    lost_ += probe_events;
  } else {
    written_ += probe_events;
  }
  if (writer_->failed() && !reported_failure_) {
    reported_failure_ = true;
    std::fprintf(stderr, "sonde: writing the log failed: %s; further events are counted as lost\n",
                 writer_->error().c_str());
  }
}

uint64_t WriterCore::decode(Decode& d, const RawEvent* begin, const RawEvent* end) {
  scratch_.clear();
  uint64_t probe_events = 0;
  scratch_.reserve(static_cast<size_t>(end - begin));
  for (const RawEvent* e = begin; e < end; ++e) {
    // The buffer was filled on another core: fetch ahead of the decoder.
    __builtin_prefetch(e + 32);
    RawKind kind = kind_of(e->b);
    uint64_t payload = payload_of(e->b);
    DecodedEvent out{};
    switch (kind) {
      case RawKind::kEnterFn:
      case RawKind::kEnterOp:
        out.kind = EventKind::kEnter;
        out.time = e->a;
        out.op = kind == RawKind::kEnterFn ? function_op(payload) : manual_op(payload);
        (d.depth < d.open.size() ? d.open.data() : grow_open(d, d.depth))[d.depth] = e->b;
        ++d.depth;
        ++probe_events;
        break;
      case RawKind::kExitFn:
      case RawKind::kExitOp:
      case RawKind::kFailFn:
      case RawKind::kFailOp: {
        bool failed = kind == RawKind::kFailFn || kind == RawKind::kFailOp;
        bool has_cause = failed && e + 1 < end && kind_of(e[1].b) == RawKind::kCause;
        if (d.depth == 0) {
          // A frame entered before a fork, returning in the child: its enter
          // is in the parent's log, so the child's log leaves it out.
          if (has_cause) ++e;
          continue;
        }
        --d.depth;
        ++probe_events;
        out.kind = failed ? EventKind::kExitFailed : EventKind::kExit;
        out.time = e->a;
        bool fn = kind == RawKind::kExitFn || kind == RawKind::kFailFn;
        out.op = fn ? function_op(payload) : manual_op(payload);
        if (has_cause) {
          ++e;
          out.cause = static_cast<uint32_t>(e->a);
        }
        break;
      }
      case RawKind::kTraceBegin:
        out.kind = EventKind::kTraceBegin;
        out.trace_id = e->a;
        if (e + 1 < end && kind_of(e[1].b) == RawKind::kTraceParent) {
          ++e;
          out.parent_trace_id = static_cast<int64_t>(e->a);
          out.parent_order_id = static_cast<int32_t>(payload_of(e->b)) - 1;
        }
        e = take_w3c(e, end, out.w3c);
        // The next event (the trace's first enter) carries the time; the
        // block encoding needs a time per event, so borrow it.
        out.time = e + 1 < end ? e[1].a : (scratch_.empty() ? 0 : scratch_.back().time);
        d.in_trace = true;
        d.depth = 0;
        break;
      case RawKind::kLost:
        out.kind = EventKind::kLost;
        out.time = e->a;
        out.lost = payload;
        lost_ += payload;
        break;
      default:
        continue;  // kCause without its failed exit, or garbage: nothing to write
    }
    scratch_.push_back(out);
  }
  return probe_events;
}

// The same decoding as decode(), fused with the native encoding: this loop
// is the writer thread's per-event cost, which under stress decides whether
// probes wait for buffers. Everything per event stays in registers (the
// cursor and depth are locals) and nothing is called on the common path.
uint64_t WriterCore::encode_native(format::NativeWriter& w, uint32_t thread, Decode& d,
                                   const RawEvent* begin, const RawEvent* end) {
  // The block's base time: the first event's time, so its delta is 0.
  uint64_t base = 0;
  for (const RawEvent* e = begin; e < end; ++e) {
    RawKind k = kind_of(e->b);
    if (k != RawKind::kTraceBegin && k != RawKind::kTraceParent && k != RawKind::kCause &&
        k != RawKind::kW3c) {
      base = e->a;
      break;
    }
  }
  w.begin_events(thread, base);
  format::NativeWriter::BlockCursor c = w.reserve_block(static_cast<size_t>(end - begin));
  // Events that are not probe events (trace begins, lost markers): the
  // probe events are the block's count less these, one counter fewer in
  // the loop's registers.
  uint64_t markers = 0;
  uint32_t depth = d.depth;
  uint64_t* open = d.open.data();
  auto open_capacity = static_cast<uint32_t>(d.open.size());
  // The last operation looked up: a buffer is mostly the same few
  // operations, and a register compare is cheaper than the cache lookup.
  // Keyed by the raw word with its kind made the exit's (see below).
  uint64_t memo_key = ~uint64_t{0};
  uint32_t memo_op = 0;
  static_assert(
      static_cast<int>(RawKind::kEnterFn) == 1 && static_cast<int>(RawKind::kExitFn) == 2 &&
      static_cast<int>(RawKind::kEnterOp) == 3 && static_cast<int>(RawKind::kExitOp) == 4);
  static_assert(static_cast<int>(EventKind::kEnter) == 0 &&
                static_cast<int>(EventKind::kExit) == 1);
  for (const RawEvent* e = begin; e < end; ++e) {
    // The buffer was filled on another core: fetch ahead of the decoder.
    __builtin_prefetch(e + 32);
    uint64_t b = e->b;
    uint64_t payload = payload_of(b);
    auto kind = static_cast<unsigned>(kind_of(b));
    if (kind - 1 < 4) [[likely]] {
      // Enter or exit, of a function (kinds 1, 2) or a manual operation (3, 4).
      unsigned is_exit = (kind & 1) ^ 1;
      depth += 1 - 2 * is_exit;  // depth stays far below 2^31 (grow_shadow's limit)
      // An exit at depth 0: a frame entered before a fork, returning in the
      // child: its enter is in the parent's log, so the child's log leaves it out.
      if (static_cast<int32_t>(depth) < 0) [[unlikely]] {
        depth = 0;
        continue;
      }
      // The open frame's word: an enter's lands at its new frame (depth - 1);
      // an exit's lands in the slot it just freed (depth), which nothing
      // reads, so no branch on the kind.
      if (depth >= open_capacity) [[unlikely]] {
        open = grow_open(d, depth);
        open_capacity = static_cast<uint32_t>(d.open.size());
      }
      open[depth - 1 + is_exit] = b;
      // The enter's word with kind 1 or 3 made 2 or 4: equal for an
      // operation's enter and exit, different for functions and manual ops.
      uint64_t key = b + (b & (uint64_t{1} << kKindShift));
      if (key != memo_key) [[unlikely]] {
        memo_op = kind <= 2 ? function_op(payload) : manual_op(payload);
        memo_key = key;
      }
      c.event(e->a, static_cast<EventKind>(is_exit), memo_op);
      continue;
    }
    switch (static_cast<RawKind>(kind)) {
      case RawKind::kFailFn:
      case RawKind::kFailOp: {
        bool has_cause = e + 1 < end && kind_of(e[1].b) == RawKind::kCause;
        if (depth == 0) {
          if (has_cause) ++e;
          continue;
        }
        --depth;
        uint64_t time = e->a;
        uint32_t op = kind_of(b) == RawKind::kFailFn ? function_op(payload) : manual_op(payload);
        uint32_t cause = 0;
        if (has_cause) {
          ++e;
          cause = static_cast<uint32_t>(e->a);
        }
        // The cause's STRING item goes to the chunk before this block.
        c.exit_failed(time, op, w.string_id(cause_text(cause)));
        break;
      }
      case RawKind::kTraceBegin: {
        uint64_t trace_id = e->a;
        int64_t parent_trace = -1;
        int32_t parent_order = -1;
        if (e + 1 < end && kind_of(e[1].b) == RawKind::kTraceParent) {
          ++e;
          parent_trace = static_cast<int64_t>(e->a);
          parent_order = static_cast<int32_t>(payload_of(e->b)) - 1;
        }
        format::w3c::Context w3c;
        e = take_w3c(e, end, w3c);
        // The next event (the trace's first enter) carries the time; the
        // block encoding needs a time per event, so borrow it.
        const uint64_t time = e + 1 < end ? e[1].a : c.last_tsc();
        if (w3c.present()) {
          c.trace_context(time, w3c);
          ++markers;
        }
        c.trace_begin(time, trace_id, parent_trace, parent_order);
        d.in_trace = true;
        depth = 0;
        ++markers;
        break;
      }
      case RawKind::kLost:
        c.lost(e->a, payload);
        lost_ += payload;
        ++markers;
        break;
      default:
        continue;  // kCause without its failed exit, or garbage: nothing to write
    }
  }
  d.depth = depth;
  w.commit_block(c);
  return c.count() - markers;
}

uint64_t* WriterCore::grow_open(Decode& d, uint32_t depth) {
  d.open.resize(std::max<size_t>({64, 2 * d.open.size(), size_t{depth} + 1}));
  return d.open.data();
}

void WriterCore::close_open_frames(uint32_t cause, uint64_t now) {
  if (!writer_->wants_events()) return;
  std::vector<RawEvent> events;
  for (auto& [thread, d] : decode_) {
    if (d.depth == 0) continue;
    events.clear();
    for (uint32_t i = d.depth; i-- > 0;) {
      const bool op = kind_of(d.open[i]) == RawKind::kEnterOp;
      events.push_back(
          {now, pack(op ? RawKind::kFailOp : RawKind::kFailFn, payload_of(d.open[i]))});
      events.push_back({cause, pack(RawKind::kCause, 0)});
    }
    consume_decoded(thread, d, events.data(), events.data() + events.size());
  }
}

void WriterCore::count_only(const RawEvent* begin, const RawEvent* end) {
  for (const RawEvent* e = begin; e < end; ++e) {
    RawKind kind = kind_of(e->b);
    if (kind == RawKind::kLost) {
      lost_ += payload_of(e->b);
    } else if (kind >= RawKind::kEnterFn && kind <= RawKind::kFailOp) {
      ++written_;
    }
  }
}

void WriterCore::record(const format::Record& r) {
  if (!writer_->failed()) writer_->record(r);
}

void WriterCore::report_loss(uint32_t thread, uint64_t events, std::string_view reason) {
  if (events == 0) return;
  lost_ += events;
  if (!writer_->failed()) writer_->loss(thread, events, reason);
}

void WriterCore::refresh_clock() {
  calibration_.refine();
  if (!writer_->failed()) writer_->clock(calibration_);
}

void WriterCore::flush(bool force) {
  if (!writer_->failed()) writer_->flush(force);
}

void WriterCore::close() {
  refresh_clock();
  writer_->close(events_written(), events_lost());
}

}  // namespace sonde::monitor
