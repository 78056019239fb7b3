#include "monitor/diagnostic_records.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/callable_schemas.hpp"
#include "format/diagnostic_schemas.hpp"
#include "format/operation_name.hpp"
#include "format/record.hpp"
#include "format/schema.hpp"
#include "monitor/clock.hpp"
#include "monitor/controller.hpp"
#include "monitor/preload_check.hpp"
#include "monitor/registry.hpp"
#include "monitor/symbolizer.hpp"
#include "monitor/thread_state.hpp"
#include "monitor/writers/writer_core.hpp"

namespace sonde::monitor {

ProbeSwitches g_probe_switches;

namespace {

// Bounded multi-producer queue (Vyukov): each slot's sequence number says
// whether it is free for the producer at `pos` (seq == pos) or filled for
// the consumer (seq == pos + 1). Producers claim a position with one CAS;
// the single consumer is the writer thread.
struct Slot {
  std::atomic<uint64_t> seq;
  DiagnosticRecord record;
};

struct Queue {
  Slot* slots = nullptr;
  uint64_t mask = 0;
  alignas(64) std::atomic<uint64_t> head{0};  // next position to claim
  alignas(64) uint64_t tail = 0;              // next position to drain (writer only)
  std::atomic<uint64_t> emitted{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> dropped_unreported{0};

  void reset() {
    for (uint64_t i = 0; i <= mask; ++i) slots[i].seq.store(i, std::memory_order_relaxed);
    head.store(0, std::memory_order_relaxed);
    tail = 0;
  }
};

std::atomic<Queue*> g_queue{nullptr};

uint64_t round_up_pow2(uint64_t n) {
  uint64_t p = 64;
  while (p < n) p *= 2;
  return p;
}

}  // namespace

void apply_probe_switches(const Config& config) {
  g_probe_switches.lock_wait_threshold_ns.store(config.probe_lock_wait_threshold_ns,
                                                std::memory_order_relaxed);
  g_probe_switches.lock_wait.store(config.probe_lock_wait ? 1 : 0, std::memory_order_relaxed);
  g_probe_switches.database.store(config.probe_database ? 1 : 0, std::memory_order_relaxed);
  g_probe_switches.messaging.store(config.probe_messaging ? 1 : 0, std::memory_order_relaxed);
  // Say so when a database library's calls bypass the probes, rather than
  // record nothing silently. Once per library.
  static bool warned[2] = {false, false};
  const char* entry_points[2] = {"sqlite3_step", "PQexec"};
  for (int i = 0; i < 2 && config.probe_database; ++i) {
    if (warned[i]) continue;
    if (std::string problem = preload_binding_problem(entry_points[i]); !problem.empty()) {
      warned[i] = true;
      std::fprintf(stderr, "sonde: probe_database: %s\n", problem.c_str());
    }
  }
  // pthread_mutex_lock may legitimately bind to another interposer first
  // (ThreadSanitizer's, which calls on to the next definition): only a
  // missing preload library is certain to leave the probe blind.
  static bool warned_lock = false;
  if (config.probe_lock_wait && !warned_lock && !preload_loaded()) {
    warned_lock = true;
    std::fprintf(stderr,
                 "sonde: probe_lock_wait: libsonde-preload.so, which holds the probe of "
                 "pthread_mutex_lock, is not loaded: LD_PRELOAD it or link it (sonde run "
                 "preloads it); no lock waits will be recorded\n");
  }
}

namespace {

// constinit: monitoring can start (and the writer thread read this) before
// this file's dynamic initializers would have run: a probe may fire in an
// earlier library's constructor, and libsonde's own constructor is not
// ordered against this file's (the sanitizer builds, which batch files,
// met both).
constinit std::string g_probes_file_text;  // what was last applied from probes_file (writer thread)

// Applies the probe_* lines of `text` on top of `base`. Only probe keys are
// accepted: the rest of the configuration cannot change at run time.
std::string apply_probes_text(Config base, std::string_view text, std::string_view origin) {
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string_view l = line;
    size_t first = l.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || l[first] == '#') continue;
    std::string where = std::string(origin) + ":" + std::to_string(number) + ": ";
    if (l.substr(first).rfind("probe_", 0) != 0) {
      return where + "only probe_* keys may be switched at run time, got '" +
             std::string(l.substr(first)) + "'";
    }
    size_t eq = l.find('=');
    if (eq == std::string_view::npos) return where + "expected 'key = value', got '" + line + "'";
    std::string_view key = l.substr(first, eq - first);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
    if (std::string err = apply_config(base, key, l.substr(eq + 1)); !err.empty()) {
      return where + err;
    }
  }
  apply_probe_switches(base);
  return "";
}

}  // namespace

std::string start_diagnostics(const Config& config) {
  if (g_queue.load() == nullptr) {
    auto* q = new Queue;  // never freed: probes may run during exit
    uint64_t n = round_up_pow2(config.probe_queue_records);
    q->slots = new Slot[n];
    q->mask = n - 1;
    q->reset();
    g_queue.store(q, std::memory_order_release);
  }
  apply_probe_switches(config);
  if (config.probes_file.empty()) return "";
  // A probes file that does not exist yet is no error: the experiment
  // engine may write it later, and the writer thread keeps looking.
  std::ifstream in(config.probes_file);
  if (!in) return "";
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  g_probes_file_text = text;
  return apply_probes_text(config, text, config.probes_file);
}

void poll_probes_file() {
  const Config& c = current_config();
  if (c.probes_file.empty()) return;
  static int64_t next_check = 0;
  int64_t now = monotonic_ns_now() / 1000000;
  if (now < next_check) return;
  next_check = now + c.patterns_reload_ms;
  std::ifstream in(c.probes_file);
  std::string text;
  if (in) text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  // A removed file reads as empty: back to the configured switches.
  if (text == g_probes_file_text) return;
  g_probes_file_text = text;
  if (std::string err = apply_probes_text(c, text, c.probes_file); !err.empty()) {
    std::fprintf(stderr, "sonde: %s (keeping the previous probe settings)\n", err.c_str());
  }
}

TracePosition current_trace_position() {
  TracePosition pos;
  ThreadState& t = t_state;
  if ((t.status != kThreadActive && t.status != kThreadResync) || t.depth == 0 ||
      t.shadow == nullptr)
    return pos;
  pos.trace_id = static_cast<int64_t>(t.trace_id - 1);  // begin_trace hands out trace_id++
  pos.order_index = static_cast<int32_t>(t.order) - 1;  // order is the next index
  pos.operation_key = t.shadow[t.depth - 1].key & ~kDroppedTag;
  return pos;
}

bool diagnostics_accepting() {
  return g_mode.load(std::memory_order_relaxed) == kModeOn &&
         g_queue.load(std::memory_order_acquire) != nullptr;
}

void emit_diagnostic(DiagnosticRecord& r) {
  Queue* q = g_queue.load(std::memory_order_acquire);
  if (q == nullptr) {
    std::free(r.text);
    r.text = nullptr;
    return;
  }
  uint64_t pos = q->head.load(std::memory_order_relaxed);
  Slot* slot = nullptr;
  for (;;) {
    slot = &q->slots[pos & q->mask];
    uint64_t seq = slot->seq.load(std::memory_order_acquire);
    auto diff = static_cast<int64_t>(seq - pos);
    if (diff == 0) {
      if (q->head.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
    } else if (diff < 0) {
      // Full: the writer is behind. Drop and count; never wait in a probe.
      q->dropped.fetch_add(1, std::memory_order_relaxed);
      q->dropped_unreported.fetch_add(1, std::memory_order_relaxed);
      std::free(r.text);
      r.text = nullptr;
      return;
    } else {
      pos = q->head.load(std::memory_order_relaxed);
    }
  }
  slot->record = r;
  r.text = nullptr;
  slot->seq.store(pos + 1, std::memory_order_release);
  q->emitted.fetch_add(1, std::memory_order_relaxed);
}

void diagnostics_after_fork_child() {
  // Only the forking thread exists here and it is not inside a probe; slots
  // half-written by vanished threads are forgotten (their text leaks).
  if (Queue* q = g_queue.load()) {
    q->reset();
    // The child's summary counts the child's records.
    q->emitted.store(0);
    q->dropped.store(0);
    q->dropped_unreported.store(0);
  }
}

uint64_t diagnostics_emitted() {
  Queue* q = g_queue.load();
  return q ? q->emitted.load() : 0;
}

uint64_t diagnostics_dropped() {
  Queue* q = g_queue.load();
  return q ? q->dropped.load() : 0;
}

// ---------------------------------------------------------------------------
// Writer side.

namespace {

// Operation names by shadow key, resolved once each on the writer thread,
// as the operation name the log's flow records carry for the same
// operation (format/operation_name.hpp, C++ form), so records and traces
// join on it.
class OperationNames {
 public:
  const std::string& name(uint64_t key) {
    auto [it, inserted] = names_.try_emplace(key);
    if (!inserted) return it->second;
    if (key == 0) return it->second;  // no operation: ""
    std::string name, module;
    if (key & kOpTag) {
      ManualOperation m;
      uint64_t id = key & ~kOpTag;
      name = lookup_operation(static_cast<uint32_t>(id), &m)
                 ? m.name
                 : "<unregistered operation " + std::to_string(id) + ">";
      module = executable();  // as WriterCore names manual operations
    } else {
      if (!symbolizer_) symbolizer_ = std::make_unique<Symbolizer>();
      Symbol s = symbolizer_->resolve(key);
      name = s.name;
      module = s.module;
    }
    const auto kind = (key & kOpTag) ? format::native::OperationKind::kManual
                                     : format::native::OperationKind::kFunction;
    it->second = format::operation_name(name, module, format::NameForm::kCpp, kind).operation;
    return it->second;
  }

 private:
  static std::string executable() {
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
  }
  std::unordered_map<uint64_t, std::string> names_;
  std::unique_ptr<Symbolizer> symbolizer_;
};

OperationNames& operation_names() {
  static OperationNames* names = new OperationNames;  // writer thread only; never destroyed
  return *names;
}

// The i-th '\0'-separated string of a record's text ("" if absent).
std::string_view text_part(const DiagnosticRecord& r, int i) {
  if (r.text == nullptr) return {};
  std::string_view all(r.text, r.text_size);
  for (; i > 0; --i) {
    size_t nul = all.find('\0');
    if (nul == std::string_view::npos) return {};
    all.remove_prefix(nul + 1);
  }
  return all.substr(0, all.find('\0'));
}

void set_position(format::Record& out, const DiagnosticRecord& r) {
  out.values[format::callable_field::kTimestamp] = int64_t{r.timestamp};
  out.values[format::callable_field::kTraceId] = int64_t{r.position.trace_id};
  out.values[format::callable_field::kOrderIndex] = int64_t{r.position.order_index};
}

void write_record(WriterCore& core, const DiagnosticRecord& r) {
  static const format::RecordSchema* lock_schema =
      format::find_builtin_schema(format::diagnostic_class::kLockWait);
  static const format::RecordSchema* db_schema =
      format::find_builtin_schema(format::callable_class::kDatabaseCall);
  static const format::RecordSchema* message_schema =
      format::find_builtin_schema(format::diagnostic_class::kMessageSend);
  format::Record out;
  switch (r.kind) {
    case DiagnosticKind::kLockWait: {
      namespace f = format::lock_field;
      format::reset_to_defaults(out, lock_schema);
      set_position(out, r);
      char address[32];
      std::snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(r.address));
      out.values[f::kWaitDuration] = int64_t{r.value0};
      out.values[f::kHoldDuration] = int64_t{r.value1};
      out.values[f::kLock] = std::string_view(address);
      out.values[f::kOperation] =
          std::string_view(operation_names().name(r.position.operation_key));
      core.record(out);
      break;
    }
    case DiagnosticKind::kDatabaseCall: {
      namespace f = format::db_field;
      format::reset_to_defaults(out, db_schema);
      set_position(out, r);
      std::string_view sql = text_part(r, 0);
      out.values[f::kDuration] = int64_t{r.value0};
      out.values[f::kSqlStatement] = sql;
      out.values[f::kPrepared] = r.value1 != 0;
      out.values[f::kBoundSqlStatement] = text_part(r, 1);
      out.values[f::kUnboundSqlStatement] = r.value1 != 0 ? sql : std::string_view();
      out.values[f::kDbUrl] = text_part(r, 2);
      out.values[f::kDbProductName] = text_part(r, 3);
      out.values[f::kDbProductVersion] = text_part(r, 4);
      core.record(out);
      break;
    }
    case DiagnosticKind::kMessageSend: {
      namespace f = format::message_field;
      format::reset_to_defaults(out, message_schema);
      set_position(out, r);
      out.values[f::kDuration] = int64_t{r.value0};
      out.values[f::kDestination] = text_part(r, 0);
      out.values[f::kBytes] = int64_t{r.value1};
      core.record(out);
      break;
    }
  }
}

}  // namespace

void drain_diagnostics(WriterCore& core) {
  Queue* q = g_queue.load(std::memory_order_acquire);
  if (q == nullptr) return;
  for (;;) {
    Slot& slot = q->slots[q->tail & q->mask];
    if (slot.seq.load(std::memory_order_acquire) != q->tail + 1) break;
    DiagnosticRecord r = slot.record;
    slot.record.text = nullptr;
    slot.seq.store(q->tail + q->mask + 1, std::memory_order_release);
    ++q->tail;
    write_record(core, r);
    std::free(r.text);
  }
  if (uint64_t lost = q->dropped_unreported.exchange(0); lost != 0) {
    core.report_loss(UINT32_MAX, lost, "diagnostic records dropped: probe queue full");
  }
}

}  // namespace sonde::monitor
