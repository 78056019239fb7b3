#include "diagnose/heuristics/common.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "stats/binomial.hpp"
#include "stats/descriptive.hpp"
#include "stats/rank_test.hpp"
#include "stats/rate_segments.hpp"
#include "stats/t_test.hpp"

namespace sonde::diagnose::heuristics {

std::vector<TimedValue> timed_response_times(const Experiment& e, const std::string& service) {
  std::vector<TimedValue> out;
  for (const Request& r : e.requests) {
    if (r.ok() && (service.empty() || r.service == service)) {
      out.push_back({r.start_ns, r.response_ms()});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TimedValue& a, const TimedValue& b) { return a.time_ns < b.time_ns; });
  return out;
}

std::vector<Bucket> make_buckets(const std::vector<TimedValue>& series, const Requirement& req,
                                 double factor, double cap_ns) {
  std::vector<Bucket> out;
  if (series.size() < 2) return out;
  const double span = static_cast<double>(series.back().time_ns - series.front().time_ns);
  const double inter = span / static_cast<double>(series.size() - 1);
  double width = factor * inter;
  if (cap_ns > 0) width = std::min(width, cap_ns);
  if (width <= 0) width = 1;
  const int64_t w = std::max<int64_t>(1, static_cast<int64_t>(width));
  const int64_t first = series.front().time_ns;
  const size_t n = static_cast<size_t>((series.back().time_ns - first) / w) + 1;
  std::vector<std::vector<double>> values(n);
  for (const TimedValue& v : series) {
    values[static_cast<size_t>((v.time_ns - first) / w)].push_back(v.value);
  }
  const int64_t last_ns = series.back().time_ns;
  for (size_t i = 0; i < n; ++i) {
    Bucket b;
    b.start_ns = first + static_cast<int64_t>(i) * w;
    // The last bucket ends with the series: nothing was observed after it.
    b.end_ns = std::min(b.start_ns + w, last_ns + 1);
    b.count = values[i].size();
    b.percentile_ms = stats::percentile(values[i], req.percentile);
    b.violating = b.count > 0 && b.percentile_ms > req.threshold_ms;
    out.push_back(b);
  }
  return out;
}

std::vector<ViolatingPeriod> violating_periods(const std::vector<Bucket>& buckets) {
  std::vector<ViolatingPeriod> out;
  const size_t n = buckets.size();
  for (size_t i = 0; i < n; ++i) {
    if (!buckets[i].violating) continue;
    ViolatingPeriod p;
    p.first = i;
    p.last = i;
    for (size_t j = i + 1; j < n && (buckets[j].violating || buckets[j].count == 0); ++j) {
      if (buckets[j].violating) p.last = j;
    }
    // Interior ends at their bucket's midpoint (the expected place of an
    // end uniform in it); an end in the series' first or last bucket at
    // the series' border.
    const auto mid = [&](size_t k) {
      return 0.5 * static_cast<double>(buckets[k].start_ns + buckets[k].end_ns);
    };
    const bool at_start = p.first == 0;
    const bool at_end = p.last + 1 == n;
    if (p.first == p.last && !at_start && !at_end) {
      p.estimated_ns = static_cast<double>(buckets[i].end_ns - buckets[i].start_ns) / 3;
    } else {
      const double left = at_start ? static_cast<double>(buckets[0].start_ns) : mid(p.first);
      const double right = at_end ? static_cast<double>(buckets[n - 1].end_ns) : mid(p.last);
      p.estimated_ns = right - left;
    }
    out.push_back(p);
    i = p.last;
  }
  return out;
}

BucketLevel bucket_level(const std::vector<Bucket>& buckets, bool all_buckets) {
  std::vector<double> levels, logs;
  for (const Bucket& b : buckets) {
    if (b.count == 0 || (b.violating && !all_buckets)) continue;
    levels.push_back(b.percentile_ms);
    if (b.percentile_ms > 0) logs.push_back(std::log(b.percentile_ms));
  }
  BucketLevel n;
  n.all_buckets = all_buckets;
  n.buckets = levels.size();
  n.typical_ms = stats::middle_value(levels);
  n.log_median = stats::middle_value(logs);
  std::vector<double> deviations;
  for (double l : logs) deviations.push_back(std::fabs(l - n.log_median));
  n.log_sigma = 1.4826 * stats::middle_value(deviations);
  return n;
}

ViolationRegime violation_regime(const std::vector<Bucket>& buckets, double threshold_ms,
                                 double level) {
  const auto quantile = [level](size_t n) {
    return n >= 3 ? stats::student_t_quantile(1 - level, static_cast<double>(n - 1)) : 0.0;
  };
  ViolationRegime r;
  r.compliant = r.scale = bucket_level(buckets, false);
  if (r.compliant.buckets < 3) return r;
  r.z = r.scale_z = quantile(r.compliant.buckets);
  r.cut_inside = threshold_ms > 0 &&
                 std::log(threshold_ms) - r.compliant.log_median <= r.z * r.compliant.log_sigma;
  if (r.cut_inside) {
    r.scale = bucket_level(buckets, true);
    r.scale_z = quantile(r.scale.buckets);
  }
  return r;
}

ViolatedTime violated_time(const std::vector<TimedValue>& series, const Requirement& req,
                           double alpha) {
  ViolatedTime out;
  if (series.empty()) return out;
  const size_t n = series.size();
  std::vector<bool> over(n);
  for (size_t i = 0; i < n; ++i) over[i] = series[i].value > req.threshold_ms;
  const double allowed = 1 - req.percentile;  // the share that may exceed
  const double span = static_cast<double>(series.back().time_ns - series.front().time_ns);
  // A segment's time runs between the midpoints to its neighbours' starts
  // (the series' first and last starts at its ends), so no request's
  // interval counts to one side only.
  const auto border = [&](size_t i) {
    if (i == 0) return series.front().time_ns;
    if (i == n) return series.back().time_ns;
    return series[i - 1].time_ns + (series[i].time_ns - series[i - 1].time_ns) / 2;
  };
  double violated = 0, low = 0, high = 0, total = 0;
  for (const stats::RateSegment& s : stats::rate_segments(over, alpha)) {
    ViolationSegment v;
    v.start_ns = border(s.begin);
    v.end_ns = border(s.end);
    v.requests = s.end - s.begin;
    v.over = s.hits;
    v.violated = static_cast<double>(v.over) > allowed * static_cast<double>(v.requests);
    // One-sided in the verdict's direction: P(X >= over), or P(X <= over)
    // = 1 - P(X >= over + 1), for X ~ Binomial(requests, allowed).
    const double p = v.violated ? stats::binomial_upper_tail(v.over, v.requests, allowed)
                                : 1 - stats::binomial_upper_tail(v.over + 1, v.requests, allowed);
    v.significant = p < alpha;
    const double weight =
        span > 0 ? static_cast<double>(v.end_ns - v.start_ns) : static_cast<double>(v.requests);
    total += weight;
    if (v.violated) violated += weight;
    if (v.violated && v.significant) low += weight;
    if (v.violated || !v.significant) high += weight;
    out.segments.push_back(v);
  }
  if (total > 0) {
    out.share = violated / total;
    out.share_low = low / total;
    out.share_high = high / total;
  }
  return out;
}

std::string describe_violated_time(const ViolatedTime& v, const Requirement& req) {
  size_t violated = 0;
  for (const ViolationSegment& s : v.segments) violated += s.violated;
  return "violated an estimated " + fmt(v.share * 100) + "% of the time (" +
         std::to_string(v.segments.size()) + " stretch(es) of constant violation rate, " +
         std::to_string(violated) + " with more than " + fmt((1 - req.percentile) * 100) +
         "% of requests over " + fmt(req.threshold_ms) + " ms; significantly violated " +
         fmt(v.share_low * 100) + "% of the time, significantly compliant " +
         fmt((1 - v.share_high) * 100) + "%)";
}

Increase test_increase(const std::vector<double>& a, const std::vector<double>& b, double alpha,
                       double min_relative) {
  Increase inc;
  inc.test = stats::welch_t_test(a, b);
  const double ma = stats::mean(a);
  const double mb = stats::mean(b);
  const stats::RankTestResult mw = stats::mann_whitney(b, a);
  if (mw.valid) inc.mann_whitney_p = mw.p_greater;
  inc.relative = ma > 0 ? (mb - ma) / ma : (mb > ma ? INFINITY : 0);
  inc.significant =
      inc.test.valid && inc.test.p_greater < alpha && mb > ma && inc.relative >= min_relative;
  return inc;
}

Evidence increase_evidence(const Increase& inc, const std::string& location,
                           const std::string& data) {
  Evidence ev;
  ev.location = location;
  ev.test = "Welch t-test (one-sided, increase)";
  ev.p_value = inc.test.p_greater;
  ev.effect_size = inc.relative;
  ev.effect = "relative increase of the mean";
  ev.data = data;
  ev.values = {{"mean_before", inc.test.mean_a},
               {"mean_after", inc.test.mean_b},
               {"t", inc.test.t},
               {"df", inc.test.df},
               {"significant", inc.significant},
               {"mann_whitney_p", inc.mann_whitney_p}};
  return ev;
}

KeyedSeries keyed_series(const std::vector<const Experiment*>& series, const std::string& cls,
                         const std::string& probe, const std::string& value_field,
                         const std::string& key_field, double scale,
                         std::string (*key_of)(std::string_view)) {
  KeyedSeries out;
  for (const Experiment* e : series) {
    if (!e->has_probe(probe)) {
      out.error = "experiment '" + e->id + "' ran without the " + probe + " probe";
      return out;
    }
    const LogRecords& recs = log_records(*e, cls);
    if (!recs.error.empty()) {
      out.error = recs.error;
      return out;
    }
    std::map<std::string, std::vector<double>> step;
    for (const LogRecord& r : recs.records) {
      const double v = r.number(value_field, -1);
      if (v < 0) continue;  // -1: unknown
      const std::string key = r.text(key_field);
      step[key_of != nullptr ? key_of(key) : key].push_back(v * scale);
    }
    out.per_step.push_back(std::move(step));
  }
  return out;
}

bool cpu_utilization(const Experiment& e, double* utilization, int* cores, std::string* error,
                     std::vector<double>* per_instant) {
  if (!e.has_probe("cpu")) {
    *error = "experiment '" + e.id + "' ran without the cpu sampler";
    return false;
  }
  const LogRecords& recs = log_records(e, "kieker.common.record.system.CPUUtilizationRecord");
  if (!recs.error.empty()) {
    *error = recs.error;
    return false;
  }
  // libsonde's CPU sampler writes one record per core ("cpu0", ...) and one
  // for all cores together (cpuID "all"). The aggregate is not a core: it
  // is the utilization when present, and the cores are counted without it.
  // A SUT pinned to some CPUs (sut.cpus) has those as its cores: only
  // their records count.
  std::set<std::string> pinned;
  for (int c : e.sut_cpus) pinned.insert("cpu" + std::to_string(c));
  std::set<std::string> ids;
  double core_sum = 0, all_sum = 0;
  size_t core_n = 0, all_n = 0;
  // instant -> {sum, n}, of the aggregate and of the cores (per_instant)
  std::map<int64_t, std::pair<double, int>> all_at, cores_at;
  for (const LogRecord& r : recs.records) {
    const double u = r.number("totalUtilization");
    const std::string id = r.text("cpuID");
    if (!pinned.empty() && !pinned.count(id)) continue;
    if (id == "all") {
      all_sum += u;
      ++all_n;
    } else {
      ids.insert(r.text("hostname") + "/" + id);
      core_sum += u;
      ++core_n;
    }
    if (per_instant != nullptr) {
      auto& slot = (id == "all" ? all_at : cores_at)[r.timestamp];
      slot.first += u;
      ++slot.second;
    }
  }
  if (per_instant != nullptr) {
    per_instant->clear();
    for (const auto& [instant, sum] : all_n > 0 ? all_at : cores_at)
      per_instant->push_back(std::clamp(sum.first / sum.second, 0.0, 1.0));
  }
  if (recs.records.empty()) {
    *error = "experiment '" + e.id + "' has no CPUUtilizationRecord in its log";
    return false;
  }
  if (core_n == 0 && all_n == 0) {
    *error = "experiment '" + e.id + "' has no CPUUtilizationRecord of its CPUs (sut_cpus)";
    return false;
  }
  const double mean =
      all_n > 0 ? all_sum / static_cast<double>(all_n) : core_sum / static_cast<double>(core_n);
  *utilization = std::clamp(mean, 0.0, 1.0);
  *cores = static_cast<int>(ids.size());  // 0 when only the aggregate was sampled
  return true;
}

namespace {
// The mean's (1 - alpha) bound on one side (+1 upper, -1 lower), scaled to
// `mean`; `mean` itself where the series gives no error.
double utilization_bound(const std::vector<double>& series, double mean, double alpha,
                         double side) {
  // Batch means where there are 20 instants or more, else the instants'
  // own spread: a step of 13 one-second instants (libsonde's default
  // period) got no bound at all before 2026-12-04, silently the mean.
  const stats::MeanError error = stats::series_mean_error(series);
  const double series_mean = stats::mean(series);
  if (error.df <= 0 || series_mean <= 0) return mean;
  const double t = stats::student_t_quantile(1 - alpha, error.df);
  return mean * (series_mean + side * t * error.se) / series_mean;
}
}  // namespace

double utilization_upper_bound(const std::vector<double>& series, double mean, double alpha) {
  return std::min(1.0, utilization_bound(series, mean, alpha, +1));
}

double utilization_lower_bound(const std::vector<double>& series, double mean, double alpha) {
  return std::max(0.0, utilization_bound(series, mean, alpha, -1));
}

DatabaseServerSamples database_server_samples(const Experiment& e) {
  DatabaseServerSamples out;
  const auto status = e.samplers.find("postgresql");
  if (status == e.samplers.end()) return out;
  out.present = true;
  if (status->value("status", "") != "ok") {
    out.error = status->value("reason", std::string("the sampler failed"));
    return out;
  }
  std::map<int64_t, std::map<std::string, double>> waiting;  // instant -> lock -> backends
  std::set<std::string> locks;
  std::map<int64_t, double> cpu_at;
  double cpu = 0;
  bool cpu_seen = false;
  for (const SampledValue& v : e.samples) {
    if (v.source != "postgresql") continue;
    if (v.metric == "active") waiting[v.time_ns];  // every instant has an "active" row
    if (v.metric == "cpu_s") cpu += v.value, cpu_seen = true, cpu_at[v.time_ns] += v.value;
    if (v.metric == "lock_waiting") waiting[v.time_ns][v.key] = v.value, locks.insert(v.key);
  }
  if (status->value("cpu", false) && cpu_seen) {
    out.cpu_s = cpu;
    for (const auto& [instant, seconds] : cpu_at) out.cpu_per_instant.push_back(seconds);
  } else {
    out.cpu_reason = status->value("cpu_reason", std::string());
    if (out.cpu_reason.empty()) out.cpu_reason = "no CPU samples in the stable phase";
  }
  out.samples = waiting.size();
  out.cpus = status->value("cpus", 0);
  for (const std::string& lock : locks) {
    std::vector<double>& series = out.lock_waiting[lock];
    for (const auto& [instant, by_lock] : waiting) {
      const auto it = by_lock.find(lock);
      series.push_back(it == by_lock.end() ? 0.0 : it->second);
    }
  }
  return out;
}

BrokerSamples broker_samples(const Experiment& e) {
  BrokerSamples out;
  const auto status = e.samplers.find("redis");
  if (status == e.samplers.end()) return out;
  out.present = true;
  if (status->value("status", "") != "ok") {
    out.error = status->value("reason", std::string("the sampler failed"));
    return out;
  }
  std::map<int64_t, std::map<std::string, double>> lengths;  // instant -> queue -> length
  std::set<std::string> queues;
  for (const SampledValue& v : e.samples) {
    if (v.source != "redis") continue;
    if (v.metric == "clients") lengths[v.time_ns];  // every instant has a "clients" row
    if (v.metric == "messages") out.messages += v.value;
    if (v.metric == "cpu_s") out.cpu_s += v.value;
    if (v.metric == "queue_length") lengths[v.time_ns][v.key] = v.value, queues.insert(v.key);
  }
  out.samples = lengths.size();
  for (const std::string& q : queues) {
    std::vector<double>& series = out.queue_length[q];
    for (const auto& [instant, by_queue] : lengths) {
      const auto it = by_queue.find(q);
      series.push_back(it == by_queue.end() ? 0.0 : it->second);
    }
  }
  return out;
}

int servers_for(const Context& ctx, int sampled_cores) {
  if (ctx.settings.cores > 0) return ctx.settings.cores;
  if (sampled_cores > 0) return sampled_cores;
  const nlohmann::json& run = ctx.data.run;
  if (run.is_object() && run.contains("cores") && run["cores"].is_number_integer() &&
      run["cores"].get<int>() > 0)
    return run["cores"].get<int>();
  return 1;
}

std::vector<std::string> violating_services(const Experiment& e, const Settings& s) {
  std::vector<std::string> out;
  for (const std::string& service : e.services()) {
    const Requirement& req = s.for_service(service);
    const std::vector<double> rt = e.response_times(service);
    if (!rt.empty() && stats::percentile(rt, req.percentile) > req.threshold_ms) {
      out.push_back(service);
    }
  }
  return out;
}

std::vector<double> durations_ms(const LogRecords& recs) {
  std::vector<double> out;
  out.reserve(recs.records.size());
  for (const LogRecord& rec : recs.records) {
    const double ns = rec.number("duration", -1);
    if (ns >= 0) out.push_back(ns / 1e6);
  }
  return out;
}

size_t findings_then_checked(std::vector<Evidence>& findings, std::vector<Evidence> checked) {
  const auto by_effect = [](const Evidence& a, const Evidence& b) {
    return a.effect_size > b.effect_size;
  };
  std::stable_sort(findings.begin(), findings.end(), by_effect);
  std::stable_sort(checked.begin(), checked.end(), by_effect);
  const size_t found = findings.size();
  for (Evidence& ev : checked) findings.push_back(std::move(ev));
  return found;
}

stats::MeanError demand_noise(const ExperimentData& data, const std::string& service,
                              const std::vector<double>& single) {
  std::vector<double> means;
  for (const Experiment& e : data.experiments) {
    if (!e.complete() || e.users != 1) continue;
    const std::vector<double> rt = e.response_times(service);
    if (rt.size() >= 2) means.push_back(stats::mean(rt));
  }
  if (means.size() >= 2) return {stats::stddev(means), static_cast<double>(means.size() - 1)};
  return stats::series_mean_error(single);
}

double misattribution_p(size_t with_query, size_t ambiguous, double p_elsewhere) {
  return stats::binomial_upper_tail(with_query, ambiguous, p_elsewhere);
}

MessagingBusy messaging_busy(const Experiment& lowest, const Experiment& step, double alpha,
                             double min_share) {
  MessagingBusy b;
  const LogRecords& at_lowest = log_records(lowest, "sonde.record.MessageSend");
  const LogRecords& at_step = log_records(step, "sonde.record.MessageSend");
  if (!at_lowest.error.empty() || !at_step.error.empty()) {
    b.error = !at_step.error.empty() ? at_step.error : at_lowest.error;
    return b;
  }
  const std::vector<double> before = durations_ms(at_lowest), after = durations_ms(at_step);
  double sent = 0, responses = 0;
  for (double ms : after) sent += ms;
  for (double ms : step.response_times()) responses += ms;
  b.send_ms = after.empty() ? 0 : sent / static_cast<double>(after.size());
  b.share = responses > 0 ? sent / responses : 0;
  const Increase inc = test_increase(before, after, alpha, 0);
  b.p_greater = inc.test.p_greater;
  b.busy = b.share >= min_share && inc.significant;
  return b;
}

std::string fmt(double v, int precision) {
  // Readable for people: 2034 not 2.03e+03; 0.0012 keeps its significant digits.
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "inf" : "-inf");
  std::ostringstream out;
  const double a = std::fabs(v);
  if (a >= 100 && a < 1e15) {
    out << std::fixed << std::setprecision(0) << v;
  } else if (a >= 1 && a < 100) {
    out << std::fixed << std::setprecision(a >= 10 ? 1 : 2) << v;
    std::string text = out.str();
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    return text;
  } else {
    out.precision(precision);
    out << v;
  }
  return out.str();
}

}  // namespace sonde::diagnose::heuristics
