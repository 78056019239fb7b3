// Reads an experiment-data directory (docs/diagnose/experiment-data.md):
// run.json, experiments/<id>/experiment.json, requests.csv and log/. The
// heuristics see the measurements only through this.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "format/string_pool.hpp"

namespace sonde::diagnose {

// Bad input (a malformed file, a bad config key): the message names it.
class DiagnoseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Request {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int user = 0;
  std::string service;
  int status = 0;
  // When the driver wrote the request (requests.csv's optional sent_ns; 0
  // in files without it): later than start_ns when an open workload's
  // arrival waited for a free connection.
  int64_t sent_ns = 0;
  double response_ms() const { return static_cast<double>(end_ns - start_ns) / 1e6; }
  int64_t sent() const { return sent_ns > 0 ? sent_ns : start_ns; }
  // Time the request waited in the load driver before it was sent.
  double driver_wait_ms() const { return static_cast<double>(sent() - start_ns) / 1e6; }
  bool ok() const { return status > 0 && status < 500; }
};

// One row of an experiment's samples.csv: a value sampled outside the
// system under test (the database server's sampler).
struct SampledValue {
  int64_t time_ns = 0;  // epoch
  std::string source;   // e.g. "postgresql"
  std::string metric;   // e.g. "cpu_s", "lock_waiting"
  std::string key;      // e.g. the locked relation; "" for a metric without keys
  double value = 0;
};

struct Experiment {
  std::string id;
  std::string dir;
  std::string kind;  // single_user | load | scaling | custom
  std::string series;
  int users = 0;
  int step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<std::string> probes;
  // The CPUs the SUT was pinned to (sut.cpus); empty: it could use every core.
  std::vector<int> sut_cpus;
  int64_t errors = 0;
  std::string status;  // complete | failed
  std::string reason;
  std::vector<Request> requests;  // successful and failed, in file order
  // Samplers outside the SUT (experiment.json "samplers"): source ->
  // {"status": ok | failed, "reason", "cpu", "cpu_reason", "samples"}.
  nlohmann::json samplers = nlohmann::json::object();
  // The share of the machine's CPU time other processes took in the stable
  // phase (experiment.json "cpu_accounting"); -1 unknown.
  double other_cpu_share = -1;
  // The share of the machine's CPU time that was busy in the stable phase
  // (cpu_accounting busy_core_s / capacity_core_s); -1 unknown.
  double busy_cpu_share = -1;
  // samples.csv rows inside the stable phase, in file order.
  std::vector<SampledValue> samples;

  bool has_probe(std::string_view probe) const;
  bool complete() const { return status == "complete"; }
  // Response times [ms] of successful requests of `service` ("" = all), by start time.
  std::vector<double> response_times(const std::string& service = "") const;
  std::vector<std::string> services() const;
  double duration_s() const;
};

// One record of a class from an experiment's log, inside the experiment's
// stable phase, its fields by name. Integer fields are kept exactly: trace
// ids (a random high half) and epoch-ns timestamps exceed a double's
// 53-bit mantissa, and as doubles neighbouring trace ids would collapse
// into one. Compact (a real program's log can hold millions of one class,
// e.g. an N+1 listing's database calls): names and strings are views into
// the pool of the LogRecords holding it, so a LogRecord copied out of its
// LogRecords is valid only while that lives (until forget_experiment).
struct LogRecord {
  struct Field {
    std::string_view name;
    std::variant<int64_t, double, std::string_view> value;  // bools are 0/1 doubles
  };
  int64_t timestamp = 0;
  int64_t trace_id = -1;
  std::vector<Field> fields;
  // An integer or real field (fallback when absent or a string).
  double number(std::string_view field, double fallback = 0) const;
  // An integer field (fallback when absent, real or a string).
  int64_t integer(std::string_view field, int64_t fallback = 0) const;
  // A string field ("" when absent or a number).
  std::string text(std::string_view field) const;

 private:
  const Field* find(std::string_view field) const;
};

struct LogRecords {
  std::vector<LogRecord> records;
  std::string error;  // non-empty: the log could not be read (names file and reason)
  std::shared_ptr<format::StringPool> strings = std::make_shared<format::StringPool>();
};

// Records of `class_name` in experiment `e`'s log/ directory. Records
// outside [start_ns, end_ns] are dropped when the experiment has a stable
// phase (end_ns > start_ns). Cached per (experiment, class).
const LogRecords& log_records(const Experiment& e, const std::string& class_name);

// Data derived from an experiment (its records above, its traces, their
// attribution to services) is cached per experiment directory until
// forget_experiment, because several heuristics read the same. Each such
// cache registers how to drop one directory's entries; forget_experiment
// drops them from every cache, so a caller that has finished with a run
// (the sensitivity re-evaluation, one case at a time) does not keep it
// resident. References obtained for `e` before are invalid afterwards, and
// it must not run while `e` is being evaluated (a value computed then
// would be stored again). The SQL shapes (sql_shape.hpp) are not per
// experiment and stay, bounded.
void register_experiment_cache(std::function<void(const std::string& dir)> forget);
void forget_experiment(const Experiment& e);

// The usual such cache: a map keyed by the experiment directory, guarded by
// `mutex` (both function-local statics). Returns true, to initialise a
// static flag so that it registers once:
//   static const bool registered = register_dir_cache(mutex, cache);
template <class DirMap>
bool register_dir_cache(std::mutex& mutex, DirMap& cache) {
  register_experiment_cache([&mutex, &cache](const std::string& dir) {
    std::lock_guard<std::mutex> lock(mutex);
    cache.erase(dir);
  });
  return true;
}

struct ExperimentData {
  std::string dir;
  nlohmann::json run;  // run.json as read ({} when absent)
  std::vector<Experiment> experiments;

  // Complete experiments of a kind, by users ascending.
  std::vector<const Experiment*> of_kind(const std::string& kind) const;
  // Complete experiments of a series, by step ascending.
  std::vector<const Experiment*> series(const std::string& name) const;
  // The complete load test with the most users (the thesis' load test at max load);
  // a scaling series' last step when there is no separate load test.
  const Experiment* max_load_test() const;
  const Experiment* single_user_test() const;
};

// Throws DiagnoseError naming the file and the problem.
ExperimentData load_experiment_data(const std::string& dir);

}  // namespace sonde::diagnose
