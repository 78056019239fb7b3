// Dispensable Synchronization (root cause of a One Lane Bridge): the time
// spent waiting for a lock grows significantly into every violating load
// (LockWait records of the pthread mutex probe). Waits are grouped by the
// lock site, the operation that took the lock: each load step runs in a
// fresh process, where the same lock has another address (ASLR, heap).
// The addresses are listed with the evidence. An uncontended lock writes
// no waits, so a site without waits at the lower load waited 0 there:
// appearing with enough waits at the next load is growth too.
#include "diagnose/heuristics/all.hpp"
#include "diagnose/heuristics/growth_with_load.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class DispensableSynchronization : public Heuristic {
 public:
  std::string name() const override { return "dispensable_synchronization"; }
  std::string title() const override { return "Dispensable Synchronization"; }
  std::string description() const override {
    return "Requests queue for a lock: the waiting time for it grows with the load. Shrink "
           "the critical section or remove the lock.";
  }
  std::vector<ExperimentNeed> needs() const override {
    return {{"scaling", "scaling", 5, {"response_time", "lock_wait"}}};
  }
  std::map<std::string, double> defaults() const override { return {{"min_relative_increase", 0}}; }
  NodeResult evaluate(const Context& ctx, nlohmann::json& /*shared*/) const override {
    NodeResult r;
    growth_with_load(ctx,
                     {"sonde.record.LockWait", "lock_wait", "waitDuration", "operation",
                      "lock site", "lock", false, true},
                     r);
    return r;
  }
};

}  // namespace

std::unique_ptr<Heuristic> make_dispensable_synchronization() {
  return std::make_unique<DispensableSynchronization>();
}

}  // namespace sonde::diagnose::heuristics
