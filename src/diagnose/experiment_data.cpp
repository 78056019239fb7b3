#include "diagnose/experiment_data.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>

#include "format/log_reader.hpp"
#include "format/record.hpp"
#include "format/schema.hpp"
#include "format/typed_flow_sink.hpp"

namespace sonde::diagnose {
namespace fs = std::filesystem;

bool Experiment::has_probe(std::string_view probe) const {
  return std::find(probes.begin(), probes.end(), probe) != probes.end();
}

std::vector<double> Experiment::response_times(const std::string& service) const {
  std::vector<const Request*> picked;
  for (const Request& r : requests) {
    if (r.ok() && (service.empty() || r.service == service)) picked.push_back(&r);
  }
  std::stable_sort(picked.begin(), picked.end(),
                   [](const Request* a, const Request* b) { return a->start_ns < b->start_ns; });
  std::vector<double> out;
  out.reserve(picked.size());
  for (const Request* r : picked) out.push_back(r->response_ms());
  return out;
}

std::vector<std::string> Experiment::services() const {
  std::set<std::string> names;
  for (const Request& r : requests) names.insert(r.service);
  return {names.begin(), names.end()};
}

double Experiment::duration_s() const {
  if (end_ns > start_ns) return static_cast<double>(end_ns - start_ns) / 1e9;
  int64_t lo = INT64_MAX;
  int64_t hi = INT64_MIN;
  for (const Request& r : requests) {
    lo = std::min(lo, r.start_ns);
    hi = std::max(hi, r.end_ns);
  }
  return hi > lo ? static_cast<double>(hi - lo) / 1e9 : 0;
}

const LogRecord::Field* LogRecord::find(std::string_view field) const {
  for (auto f = fields.rbegin(); f != fields.rend(); ++f) {  // a name given twice: its last
    if (f->name == field) return &*f;
  }
  return nullptr;
}

double LogRecord::number(std::string_view field, double fallback) const {
  const Field* f = find(field);
  if (f == nullptr) return fallback;
  if (const auto* i = std::get_if<int64_t>(&f->value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&f->value)) return *d;
  return fallback;
}

int64_t LogRecord::integer(std::string_view field, int64_t fallback) const {
  const Field* f = find(field);
  const auto* i = f == nullptr ? nullptr : std::get_if<int64_t>(&f->value);
  return i == nullptr ? fallback : *i;
}

std::string LogRecord::text(std::string_view field) const {
  const Field* f = find(field);
  const auto* s = f == nullptr ? nullptr : std::get_if<std::string_view>(&f->value);
  return s == nullptr ? std::string() : std::string(*s);
}

namespace {

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw DiagnoseError(path.string() + ": cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw DiagnoseError(path.string() + ": invalid JSON: " + e.what());
  }
}

template <typename T>
T field(const nlohmann::json& j, const char* key, T fallback, const fs::path& path) {
  if (!j.contains(key)) return fallback;
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw DiagnoseError(path.string() + ": key '" + key + "' has the wrong type");
  }
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cell);
      cell.clear();
    } else if (c != '\r') {
      cell += c;
    }
  }
  out.push_back(cell);
  return out;
}

int64_t to_int(const std::string& text, const fs::path& path, size_t line, const char* what) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument("trailing");
    return v;
  } catch (const std::exception&) {
    throw DiagnoseError(path.string() + ":" + std::to_string(line) + ": " + what +
                        " is not an integer: '" + text + "'");
  }
}

// Calls `row` for each data line of the CSV file at `path` (header
// skipped) after checking it has the header's number of columns. A
// missing file calls nothing: the heuristics needing it say so.
template <typename Row>
void for_each_csv_row(const fs::path& path, const std::vector<std::string>& columns, Row row) {
  std::ifstream in(path);
  if (!in) return;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1 || line.empty()) continue;  // header
    std::vector<std::string> cells = split_csv(line);
    if (cells.size() != columns.size()) {
      std::string header;
      for (const std::string& c : columns) header += (header.empty() ? "" : ",") + c;
      throw DiagnoseError(path.string() + ":" + std::to_string(number) + ": expected " +
                          std::to_string(columns.size()) + " columns (" + header + "), found " +
                          std::to_string(cells.size()));
    }
    row(cells, number);
  }
}

// requests.csv's header: the five columns of the first format, or those
// and sent_ns (the driver's send time, since 2026-11-28).
std::vector<std::string> requests_columns(const fs::path& path) {
  std::vector<std::string> columns = {"start_ns", "end_ns", "user", "service", "status"};
  std::ifstream in(path);
  std::string header;
  if (in && std::getline(in, header) && split_csv(header).size() == 6) {
    if (split_csv(header)[5] != "sent_ns")
      throw DiagnoseError(path.string() + ":1: the sixth column must be sent_ns, found '" +
                          split_csv(header)[5] + "'");
    columns.push_back("sent_ns");
  }
  return columns;
}

void read_requests(const fs::path& path, Experiment& e) {
  const std::vector<std::string> columns = requests_columns(path);
  for_each_csv_row(path, columns, [&](const std::vector<std::string>& cells, size_t number) {
    Request r;
    r.start_ns = to_int(cells[0], path, number, "start_ns");
    r.end_ns = to_int(cells[1], path, number, "end_ns");
    r.user = static_cast<int>(to_int(cells[2], path, number, "user"));
    r.service = cells[3];
    r.status = static_cast<int>(to_int(cells[4], path, number, "status"));
    if (r.end_ns < r.start_ns) {
      throw DiagnoseError(path.string() + ":" + std::to_string(number) +
                          ": end_ns is before start_ns");
    }
    if (cells.size() == 6) {
      r.sent_ns = to_int(cells[5], path, number, "sent_ns");
      if (r.sent_ns < r.start_ns || r.sent_ns > r.end_ns)
        throw DiagnoseError(path.string() + ":" + std::to_string(number) +
                            ": sent_ns is outside [start_ns, end_ns]");
    }
    e.requests.push_back(std::move(r));
  });
}

// samples.csv (time_ns,source,metric,key,value); rows outside the stable
// phase are dropped, as log records are.
void read_samples(const fs::path& path, Experiment& e) {
  for_each_csv_row(path, {"time_ns", "source", "metric", "key", "value"},
                   [&](const std::vector<std::string>& cells, size_t number) {
                     SampledValue v;
                     v.time_ns = to_int(cells[0], path, number, "time_ns");
                     v.source = cells[1];
                     v.metric = cells[2];
                     v.key = cells[3];
                     try {
                       size_t used = 0;
                       v.value = std::stod(cells[4], &used);
                       if (used != cells[4].size()) throw std::invalid_argument("trailing");
                     } catch (const std::exception&) {
                       throw DiagnoseError(path.string() + ":" + std::to_string(number) +
                                           ": value is not a number: '" + cells[4] + "'");
                     }
                     if (e.end_ns > e.start_ns && (v.time_ns < e.start_ns || v.time_ns > e.end_ns))
                       return;
                     e.samples.push_back(std::move(v));
                   });
}

Experiment read_experiment(const fs::path& dir) {
  const fs::path path = dir / "experiment.json";
  const nlohmann::json j = read_json(path);
  if (!j.is_object()) throw DiagnoseError(path.string() + ": expected a JSON object");
  Experiment e;
  e.dir = dir.string();
  e.id = field<std::string>(j, "id", dir.filename().string(), path);
  e.kind = field<std::string>(j, "kind", "", path);
  static const std::set<std::string> kinds = {"single_user", "load", "scaling", "custom"};
  if (!kinds.count(e.kind)) {
    throw DiagnoseError(path.string() +
                        ": key 'kind' must be single_user, load, scaling or custom");
  }
  e.series = field<std::string>(j, "series", "", path);
  e.users = field<int>(j, "users", 0, path);
  e.step = field<int>(j, "step", 0, path);
  e.start_ns = field<int64_t>(j, "start_ns", 0, path);
  e.end_ns = field<int64_t>(j, "end_ns", 0, path);
  e.probes = field<std::vector<std::string>>(j, "probes", {}, path);
  e.sut_cpus = field<std::vector<int>>(j, "sut_cpus", {}, path);
  e.errors = field<int64_t>(j, "errors", 0, path);
  e.status = field<std::string>(j, "status", "complete", path);
  e.reason = field<std::string>(j, "reason", "", path);
  if (j.contains("samplers")) {
    if (!j.at("samplers").is_object())
      throw DiagnoseError(path.string() + ": key 'samplers' must be an object");
    e.samplers = j.at("samplers");
  }
  if (j.contains("cpu_accounting")) {
    const nlohmann::json& cpu = j.at("cpu_accounting");
    if (!cpu.is_object())
      throw DiagnoseError(path.string() + ": key 'cpu_accounting' must be an object");
    // {"error": ...} when the engine could not read /proc: unknown.
    if (cpu.contains("other_share")) {
      if (!cpu.at("other_share").is_number())
        throw DiagnoseError(path.string() + ": key 'cpu_accounting.other_share' must be a number");
      e.other_cpu_share = cpu.at("other_share").get<double>();
    }
    const auto busy = cpu.find("busy_core_s");
    const auto capacity = cpu.find("capacity_core_s");
    if (busy != cpu.end() && capacity != cpu.end() && busy->is_number() && capacity->is_number() &&
        capacity->get<double>() > 0)
      e.busy_cpu_share = busy->get<double>() / capacity->get<double>();
  }
  read_requests(dir / "requests.csv", e);
  read_samples(dir / "samples.csv", e);
  return e;
}

// The flow records of a native log, passed over: a class they are not
// needs none of them, and taking them in typed form skips building a
// generic record for each (they are nearly all of a monitored program's).
class SkipFlow : public format::TypedFlowSink {
 public:
  void on_source_begin() override {}
  void on_operation(uint32_t, std::string_view, std::string_view) override {}
  bool on_trace_start(const format::TypedTraceStart&) override { return true; }
  bool on_operation_event(const format::TypedOperationEvent&) override { return true; }
};

bool is_flow_class(std::string_view cls) {
  namespace k = format::kieker_class;
  return cls == k::kTraceMetadata || cls == k::kBeforeOperation || cls == k::kAfterOperation ||
         cls == k::kAfterOperationFailed;
}

class ClassFilter : public format::RecordSink {
 public:
  ClassFilter(const Experiment& e, const std::string& cls, LogRecords& out)
      : e_(e), cls_(cls), out_(out) {}
  format::TypedFlowSink* typed_flow() override { return is_flow_class(cls_) ? nullptr : &skip_; }
  bool on_record(const format::Record& r) override {
    if (r.schema == nullptr || r.schema->class_name != cls_) return true;
    const size_t n = std::min(r.schema->fields.size(), r.values.size());
    LogRecord rec;
    for (size_t i = 0; i < n; ++i) {
      const auto* i64 = std::get_if<int64_t>(&r.values[i]);
      if (i64 != nullptr && r.schema->fields[i].name == "timestamp") rec.timestamp = *i64;
      if (i64 != nullptr && r.schema->fields[i].name == "traceId") rec.trace_id = *i64;
    }
    // Outside the stable phase: dropped before anything is kept of it.
    if (e_.end_ns > e_.start_ns && (rec.timestamp < e_.start_ns || rec.timestamp > e_.end_ns)) {
      return true;
    }
    format::StringPool& pool = *out_.strings;
    rec.fields.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const std::string_view name = pool.intern(r.schema->fields[i].name);
      const format::Value& v = r.values[i];
      if (const auto* i64 = std::get_if<int64_t>(&v)) {
        rec.fields.push_back({name, *i64});
      } else if (const auto* d = std::get_if<double>(&v)) {
        rec.fields.push_back({name, *d});
      } else if (const auto* b = std::get_if<bool>(&v)) {
        rec.fields.push_back({name, *b ? 1.0 : 0.0});
      } else if (const auto* s = std::get_if<std::string_view>(&v)) {
        rec.fields.push_back({name, pool.intern(*s)});
      }
    }
    out_.records.push_back(std::move(rec));
    return true;
  }

 private:
  const Experiment& e_;
  const std::string& cls_;
  LogRecords& out_;
  SkipFlow skip_;
};

// Keyed by the stable phase too: an experiment run again into the same
// directory has other records (and another phase).
using LogRecordsKey = std::tuple<std::string, std::int64_t, std::int64_t, std::string>;

struct LogRecordsCache {
  std::mutex mutex;
  std::map<LogRecordsKey, LogRecords> entries;
};

LogRecordsCache& log_records_cache() {
  static LogRecordsCache c;
  return c;
}

struct CacheRegistry {
  std::mutex mutex;
  std::vector<std::function<void(const std::string&)>> forgets;
};

CacheRegistry& cache_registry() {
  static CacheRegistry r;
  return r;
}

}  // namespace

void register_experiment_cache(std::function<void(const std::string& dir)> forget) {
  CacheRegistry& r = cache_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.forgets.push_back(std::move(forget));
}

void forget_experiment(const Experiment& e) {
  CacheRegistry& r = cache_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& forget : r.forgets) forget(e.dir);
}

const LogRecords& log_records(const Experiment& e, const std::string& class_name) {
  LogRecordsCache& c = log_records_cache();
  static const bool registered =
      (register_experiment_cache([](const std::string& dir) {
         LogRecordsCache& all = log_records_cache();
         std::lock_guard<std::mutex> lock(all.mutex);
         auto it = all.entries.lower_bound(LogRecordsKey{dir, INT64_MIN, INT64_MIN, ""});
         while (it != all.entries.end() && std::get<0>(it->first) == dir)
           it = all.entries.erase(it);
       }),
       true);
  (void)registered;
  auto& cache = c.entries;
  std::lock_guard<std::mutex> lock(c.mutex);
  const auto key = std::make_tuple(e.dir, e.start_ns, e.end_ns, class_name);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  LogRecords out;  // built aside: an exception (bad_alloc) leaves no half-built entry
  const fs::path log = fs::path(e.dir) / "log";
  if (!fs::exists(log)) {
    out.error = log.string() + ": no log directory";
  } else {
    ClassFilter filter(e, class_name, out);
    const format::LogReadStats stats = format::read_log(log.string(), filter);
    if (!stats.ok)
      out.error =
          log.string() + ": " + (stats.errors.empty() ? "unreadable" : stats.errors.front());
  }
  return cache.emplace(key, std::move(out)).first->second;
}

std::vector<const Experiment*> ExperimentData::of_kind(const std::string& kind) const {
  std::vector<const Experiment*> out;
  for (const Experiment& e : experiments) {
    if (e.kind == kind && e.complete()) out.push_back(&e);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Experiment* a, const Experiment* b) { return a->users < b->users; });
  return out;
}

std::vector<const Experiment*> ExperimentData::series(const std::string& name) const {
  std::vector<const Experiment*> out;
  for (const Experiment& e : experiments) {
    if (e.series == name && e.complete()) out.push_back(&e);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Experiment* a, const Experiment* b) { return a->step < b->step; });
  return out;
}

const Experiment* ExperimentData::max_load_test() const {
  std::vector<const Experiment*> loads = of_kind("load");
  if (!loads.empty()) return loads.back();
  std::vector<const Experiment*> scaling = of_kind("scaling");
  return scaling.empty() ? nullptr : scaling.back();
}

const Experiment* ExperimentData::single_user_test() const {
  for (const Experiment* e : of_kind("single_user")) {
    if (e->series.empty() || e->series == "single_user") return e;
  }
  std::vector<const Experiment*> scaling = of_kind("scaling");
  if (!scaling.empty() && scaling.front()->users == 1) return scaling.front();
  return nullptr;
}

ExperimentData load_experiment_data(const std::string& dir) {
  ExperimentData data;
  data.dir = dir;
  if (!fs::is_directory(dir)) throw DiagnoseError(dir + ": not a directory");
  const fs::path run = fs::path(dir) / "run.json";
  data.run = fs::exists(run) ? read_json(run) : nlohmann::json::object();
  const fs::path exps = fs::path(dir) / "experiments";
  if (!fs::is_directory(exps)) throw DiagnoseError(exps.string() + ": missing (no experiments)");
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(exps)) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& d : dirs) data.experiments.push_back(read_experiment(d));
  return data;
}

}  // namespace sonde::diagnose
