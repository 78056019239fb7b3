#include "monitor/registry.hpp"

#include <mutex>
#include <unordered_map>

#include "monitor/controller.hpp"
#include "monitor/probe_busy.hpp"

namespace sonde::monitor {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<ManualOperation> ops;  // id - 1 indexes this
  std::vector<std::string> causes;   // id indexes this; 0 is "" (no cause)
  std::unordered_map<std::string, uint32_t> cause_ids;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: probes may run during exit
  return *r;
}

// Causes beyond this many distinct texts share one id, so a program throwing
// unique messages in a loop cannot grow memory without bound.
constexpr size_t kMaxCauses = 100000;

}  // namespace

void lock_registry_for_fork() { registry().mu.lock(); }
void unlock_registry_after_fork() { registry().mu.unlock(); }

void register_operation(sonde_op* op) {
  Registry& r = registry();
  MonitorLock lock(r.mu);
  if (__atomic_load_n(&op->id, __ATOMIC_RELAXED) == 0) {
    r.ops.push_back({op->name != nullptr ? op->name : "<unnamed>",
                     op->file != nullptr ? op->file : "", op->line});
    __atomic_store_n(&op->id, static_cast<uint32_t>(r.ops.size()), __ATOMIC_RELAXED);
  }
  bool on = operation_monitored(r.ops[op->id - 1].name);
  __atomic_store_n(&op->state, on ? op_enabled_tag() : op_disabled_tag(), __ATOMIC_RELEASE);
}

bool lookup_operation(uint32_t id, ManualOperation* out) {
  Registry& r = registry();
  MonitorLock lock(r.mu);
  if (id == 0 || id > r.ops.size()) return false;
  *out = r.ops[id - 1];
  return true;
}

uint32_t intern_cause(const char* cause) {
  Registry& r = registry();
  std::string text = cause != nullptr ? cause : "";
  MonitorLock lock(r.mu);
  if (r.causes.empty()) {
    r.causes.emplace_back();
    r.causes.emplace_back("<more distinct causes than sonde keeps>");
  }
  if (text.empty()) return 0;
  auto it = r.cause_ids.find(text);
  if (it != r.cause_ids.end()) return it->second;
  if (r.causes.size() >= kMaxCauses) return 1;
  uint32_t id = static_cast<uint32_t>(r.causes.size());
  r.causes.push_back(text);
  r.cause_ids.emplace(std::move(text), id);
  return id;
}

std::string cause_text(uint32_t id) {
  Registry& r = registry();
  MonitorLock lock(r.mu);
  return id < r.causes.size() ? r.causes[id] : std::string();
}

}  // namespace sonde::monitor
