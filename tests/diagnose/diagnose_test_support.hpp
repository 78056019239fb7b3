// Synthetic experiment-data directories (docs/diagnose/experiment-data.md)
// for the heuristic tests: requests.csv with planted response-time
// patterns and logs with planted records, written with the project's own
// native log writer. Deterministic: every random draw comes from a seeded RNG.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "diagnose/diagnosis.hpp"
#include "format/builtin_schemas.hpp"
#include "format/record_log_writer.hpp"
#include "format/schema.hpp"

namespace sonde::diagnose::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sonde-diagnose-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline constexpr int64_t kT0 = 1'700'000'000'000'000'000;  // epoch ns of every experiment's start
inline constexpr int64_t kMs = 1'000'000;

struct ExperimentSpec {
  std::string id;
  std::string kind = "load";
  std::string series;
  int users = 10;
  int step = 0;
  std::vector<std::string> probes = {"response_time"};
  int requests = 400;
  int64_t inter_request_ns = 20 * kMs;
  std::vector<std::string> services = {"GET /product"};
  // Response time [ms] of request i (of `requests`) of service s; noise added by the writer.
  std::function<double(int i, const std::string& service)> response_ms =
      [](int, const std::string&) { return 100.0; };
  double noise_ms = 5;  // uniform +- noise
  std::string status = "complete";
};

// Step k (0..4) of the tests' five-step scaling series "scaling": 1, 13,
// 25, 37 and 50 users, 300 requests each.
inline ExperimentSpec scaling_step(int k, std::vector<std::string> probes) {
  static constexpr int kUsers[] = {1, 13, 25, 37, 50};
  ExperimentSpec s;
  s.id = "scaling-s" + std::to_string(k);
  s.kind = "scaling";
  s.series = "scaling";
  s.step = k;
  s.users = kUsers[k];
  s.requests = 300;
  s.probes = std::move(probes);
  return s;
}

// Writes experiments/<id>/experiment.json and requests.csv; returns the experiment dir.
inline std::string write_experiment(const std::string& root, const ExperimentSpec& s,
                                    uint64_t seed = 42) {
  const std::string dir = root + "/experiments/" + s.id;
  std::filesystem::create_directories(dir);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> noise(-s.noise_ms, s.noise_ms);
  std::ofstream csv(dir + "/requests.csv");
  csv << "start_ns,end_ns,user,service,status\n";
  int n = 0;
  for (int i = 0; i < s.requests; ++i) {
    for (const std::string& service : s.services) {
      const int64_t start = kT0 + static_cast<int64_t>(i) * s.inter_request_ns;
      const double rt = std::max(0.1, s.response_ms(i, service) + noise(rng));
      csv << start << ',' << start + static_cast<int64_t>(rt * 1e6) << ','
          << (i % std::max(1, s.users)) << ',' << service << ",200\n";
      ++n;
    }
  }
  const nlohmann::json j = {
      {"id", s.id},
      {"kind", s.kind},
      {"series", s.series},
      {"users", s.users},
      {"step", s.step},
      {"start_ns", kT0},
      {"end_ns", kT0 + static_cast<int64_t>(s.requests) * s.inter_request_ns + 10'000 * kMs},
      {"probes", s.probes},
      {"requests", n},
      {"errors", 0},
      {"status", s.status},
      {"reason", ""}};
  std::ofstream(dir + "/experiment.json") << j.dump(2);
  return dir;
}

// A database sampler's output for one experiment: experiment.json's
// "samplers" entry and samples.csv with `instants` sampling instants 100 ms
// apart inside the stable phase, the server using `cpu_cores` of CPU and
// `waiters(t)` backends waiting for the lock on "stock" at instant t.
inline void write_server_samples(const std::string& dir, double cpu_cores, int instants,
                                 const std::function<int(int)>& waiters,
                                 const std::string& failure = "", int server_cpus = 0) {
  nlohmann::json e;
  std::ifstream(dir + "/experiment.json") >> e;
  e["samplers"]["postgresql"] = {{"status", failure.empty() ? "ok" : "failed"},
                                 {"reason", failure},
                                 {"cpu", true},
                                 {"cpu_reason", ""},
                                 {"samples", instants}};
  if (server_cpus > 0) e["samplers"]["postgresql"]["cpus"] = server_cpus;
  std::ofstream(dir + "/experiment.json") << e.dump(2);
  std::ofstream csv(dir + "/samples.csv");
  csv << "time_ns,source,metric,key,value\n";
  const double interval_s = 0.1;
  bool waited = false;
  for (int t = 0; t < instants; ++t) {
    const int64_t at = kT0 + (t + 1) * 100 * kMs;
    csv << at << ",postgresql,cpu_s,," << cpu_cores * interval_s << "\n";
    csv << at << ",postgresql,active,,1\n";
    // As the sampler writes it: a lock's rows start once somebody waited.
    waited = waited || waiters(t) > 0;
    if (waited) csv << at << ",postgresql,lock_waiting,stock," << waiters(t) << "\n";
  }
}

// Schemas of the probe records another part of sonde defines (field names
// as in docs/diagnose/experiment-data.md).
inline const format::RecordSchema& lock_wait_schema() {
  using T = format::FieldType;
  static const format::RecordSchema s{"sonde.record.LockWait",
                                      {{"timestamp", T::kInt64},
                                       {"traceId", T::kInt64},
                                       {"orderIndex", T::kInt32},
                                       {"waitDuration", T::kInt64},
                                       {"holdDuration", T::kInt64},
                                       {"lock", T::kString},
                                       {"operation", T::kString}}};
  return s;
}
inline const format::RecordSchema& message_send_schema() {
  using T = format::FieldType;
  static const format::RecordSchema s{"sonde.record.MessageSend",
                                      {{"timestamp", T::kInt64},
                                       {"traceId", T::kInt64},
                                       {"orderIndex", T::kInt32},
                                       {"duration", T::kInt64},
                                       {"destination", T::kString},
                                       {"bytes", T::kInt64}}};
  return s;
}

// One request trace as libsonde writes it: flow events 1 us apart, plus
// MessageSend and DatabaseCall records placed by order index (a record's
// orderIndex is the last event before it: the before event of the function
// that sends or queries).
class TraceWriter {
 public:
  // `parent`: the trace that handed this one its work (-1: a root trace);
  // `thread`: the thread id it ran on.
  TraceWriter(format::RecordSink& sink, int64_t trace, int64_t start, int64_t parent = -1,
              int64_t thread = 1)
      : sink_(sink), trace_(trace), now_(start) {
    format::Record r;
    format::reset_to_defaults(r, format::find_builtin_schema(format::kieker_class::kTraceMetadata));
    r.values[0] = trace;
    r.values[1] = thread;
    r.values[4] = parent < 0 ? trace : parent;
    r.values[5] = int64_t{parent < 0 ? -1 : 0};
    r.logging_timestamp = start;
    sink_.on_record(r);
  }
  void enter(const std::string& op) { event(format::kieker_class::kBeforeOperation, op); }
  void leave(const std::string& op) { event(format::kieker_class::kAfterOperation, op); }
  // A send of `duration_ns`; the clock does not move (see advance_to).
  void send(const std::string& destination, int64_t bytes, int64_t duration_ns = 20'000) {
    format::Record r;
    format::reset_to_defaults(r, &message_send_schema());
    r.values[0] = now_;
    r.values[1] = trace_;
    r.values[2] = int64_t{order_ - 1};
    r.values[3] = duration_ns;
    r.values[4] = std::string_view(destination);
    r.values[5] = bytes;
    sink_.on_record(r);
  }
  // A query of `duration_ns` that starts now; the clock moves past it.
  void database_call(const std::string& sql, int64_t duration_ns) {
    format::Record r;
    format::reset_to_defaults(r, format::find_builtin_schema("sonde.record.DatabaseCall"));
    r.values[0] = now_;
    r.values[1] = trace_;
    r.values[2] = int64_t{order_ - 1};
    r.values[3] = duration_ns;
    r.values[4] = std::string_view(sql);
    sink_.on_record(r);
    now_ += duration_ns;
  }
  // Moves the clock to `time` (epoch ns), e.g. to end the trace there.
  void advance_to(int64_t time) { now_ = std::max(now_, time); }

 private:
  void event(std::string_view cls, const std::string& op) {
    format::Record r;
    format::reset_to_defaults(r, format::find_builtin_schema(cls));
    now_ += 1000;
    r.values[0] = now_;
    r.values[1] = trace_;
    r.values[2] = int64_t{order_++};
    r.values[3] = std::string_view(op);
    r.values[4] = std::string_view("shop");
    r.logging_timestamp = now_;
    sink_.on_record(r);
  }
  format::RecordSink& sink_;
  int64_t trace_;
  int64_t now_;
  int32_t order_ = 0;
};

// Writes <experiment dir>/log/data.sonde with the records `fill` produces.
inline void write_log(const std::string& experiment_dir,
                      const std::function<void(format::RecordSink&)>& fill) {
  std::filesystem::create_directories(experiment_dir + "/log");
  auto writer =
      format::open_record_log(format::OutputFormat::kNative, experiment_dir + "/log/data.sonde");
  fill(*writer);
  const std::string error = writer->finish();
  if (!error.empty()) throw std::runtime_error("write_log: " + error);
}

// One heuristic of the registry on the experiment data in `dir`, with the
// default settings (1000 ms at P99) and the given ancestors' results.
inline NodeResult evaluate(const std::string& dir, const std::string& heuristic,
                           std::map<std::string, nlohmann::json> ancestors = {}) {
  const ExperimentData data = load_experiment_data(dir);
  Settings settings;
  const Heuristic& h = *heuristic_registry().at(heuristic);
  Context ctx{data, settings, h.defaults(), ancestors};
  nlohmann::json shared = nlohmann::json::object();
  return h.evaluate(ctx, shared);
}

// The same with some parameters of the heuristic set (e.g. the thesis'
// value where the project's default differs).
inline NodeResult evaluate_with(const std::string& dir, const std::string& heuristic,
                                const std::map<std::string, double>& params) {
  const ExperimentData data = load_experiment_data(dir);
  Settings settings;
  const Heuristic& h = *heuristic_registry().at(heuristic);
  std::map<std::string, nlohmann::json> ancestors;
  Context ctx{data, settings, h.defaults(), ancestors};
  for (const auto& [name, value] : params) ctx.params[name] = value;
  nlohmann::json shared = nlohmann::json::object();
  return h.evaluate(ctx, shared);
}

// The node `id` in a diagnosis' result tree, or null.
inline const NodeResult* find(const NodeResult& r, const std::string& id) {
  if (r.id == id) return &r;
  for (const NodeResult& c : r.children) {
    if (const NodeResult* f = find(c, id)) return f;
  }
  return nullptr;
}

// Shared by the heuristics' tests (heuristics_*_test.cpp): a load test at
// 50 users, a scaling series, an experiment's folder.
inline ExperimentSpec load_test_spec(std::function<double(int, const std::string&)> rt,
                                     int requests = 2000) {
  ExperimentSpec s;
  s.id = "load-u50";
  s.users = 50;
  s.requests = requests;
  s.response_ms = std::move(rt);
  return s;
}

// Scaling series, users 1, 13, 25, 37, 50; rt(step) ms per request.
// noise_ms: uniform +- noise per request (default: 5% of the step's time).
inline void write_scaling_series(const std::string& root, const std::vector<double>& rt,
                                 std::vector<std::string> probes = {"response_time"},
                                 double noise_ms = -1) {
  for (int k = 0; k < 5; ++k) {
    ExperimentSpec s = scaling_step(k, probes);
    const double v = rt[static_cast<size_t>(k)];
    s.response_ms = [v](int, const std::string&) { return v; };
    s.noise_ms = noise_ms >= 0 ? noise_ms : v * 0.05;
    write_experiment(root, s, 100 + static_cast<uint64_t>(k));
  }
}

inline std::string experiment_path(const std::string& root, const std::string& id) {
  return root + "/experiments/" + id;
}

// A scaling series of five steps; rt(step) ms per request, no noise.
inline void write_scaling(const TempDir& d, const std::vector<double>& rt,
                          const std::vector<std::string>& probes) {
  for (int k = 0; k < 5; ++k) {
    ExperimentSpec s = scaling_step(k, probes);
    const double v = rt[static_cast<size_t>(k)];
    s.response_ms = [v](int, const std::string&) { return v; };
    write_experiment(d.path(), s, static_cast<uint64_t>(k));
  }
}

}  // namespace sonde::diagnose::test
