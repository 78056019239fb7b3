// Building blocks the heuristics share: requirement checks, the bucket
// strategy, "did it increase significantly", per-key samples across a series.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/heuristic.hpp"
#include "stats/descriptive.hpp"
#include "stats/t_test.hpp"

namespace sonde::diagnose::heuristics {

struct TimedValue {
  int64_t time_ns = 0;
  double value = 0;
};

// Successful requests of `service` as (start, response ms), by start time.
std::vector<TimedValue> timed_response_times(const Experiment& e, const std::string& service);

struct Bucket {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  size_t count = 0;
  double percentile_ms = 0;  // NaN when empty
  bool violating = false;
};

// Fixed-width buckets over the series from its first start; width_ns =
// factor * mean inter-request time, capped at cap_ns (0 = no cap). The
// last bucket ends just after the series' last start.
std::vector<Bucket> make_buckets(const std::vector<TimedValue>& series, const Requirement& req,
                                 double factor, double cap_ns);

// A run of violating buckets: `first` and `last` violate, the buckets
// between them violate or are empty.
struct ViolatingPeriod {
  size_t first = 0;
  size_t last = 0;
  double estimated_ns = 0;  // the violation's expected duration (below)
};

// The violating periods of a bucket series, each with the expected length
// of the violation that made it if the violation is an excursion that
// touched its buckets rather than filled them (a 100 ms pause makes a
// bucket of 700 ms violate). With both ends of the violation placed
// uniformly in the period's first and last buckets, its expected length is
// the distance between their midpoints, (k - 1) bucket widths for k >= 2
// buckets, and a third of a bucket for one. A period in the series' first
// or last bucket is counted to the series' border, where the observation
// ends (half a bucket more for k >= 2; a lone bucket there counts half).
std::vector<ViolatingPeriod> violating_periods(const std::vector<Bucket>& buckets);

// A service's normal level from its compliant buckets (or, with
// `all_buckets`, from every non-empty one): the median percentile, and on
// a log scale the median and the robust standard deviation (1.4826 x MAD,
// the normal-consistent scale).
struct BucketLevel {
  double typical_ms = 0;  // 0 when no bucket counts
  double log_median = 0;
  double log_sigma = 0;
  size_t buckets = 0;
  bool all_buckets = false;
};
BucketLevel bucket_level(const std::vector<Bucket>& buckets, bool all_buckets);

// How a service's violations relate to its normal level, judged at `level`
// (alpha over the non-empty buckets, any of which could have been the
// candidate). The compliant buckets are those the threshold cuts off; z is
// Student's t at 1 - level with their count - 1 df. Where the threshold
// lies within z of their robust standard deviations above their median,
// the cut is inside their own variation: the service's level itself sits
// at the threshold and its buckets flicker across it (`cut_inside`).
// Where it lies beyond, violations are excursions from a level far below
// it (pauses). With fewer than 3 compliant buckets, not cut inside.
struct ViolationRegime {
  BucketLevel compliant;
  double z = 0;
  // The level a peak is judged against: the compliant buckets', or all
  // non-empty buckets' where the cut is inside (their own z).
  BucketLevel scale;
  double scale_z = 0;
  bool cut_inside = false;
};
ViolationRegime violation_regime(const std::vector<Bucket>& buckets, double threshold_ms,
                                 double level);

// A stretch of a service's requests over which the share exceeding the
// threshold is constant (stats/rate_segments.hpp), with its verdict: the
// requirement "percentile <= threshold" is violated where more than
// 1 - percentile of the requests exceed the threshold.
struct ViolationSegment {
  // Its time: from the midpoint between its first request's start and the
  // one before, to the midpoint after its last (the series' first and last
  // starts at the ends).
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  size_t requests = 0;
  size_t over = 0;        // requests above the threshold
  bool violated = false;  // over / requests > 1 - percentile
  // The verdict holds at alpha for the segment's own requests (one-sided
  // binomial test of `over` against 1 - percentile in the verdict's
  // direction). Optimistic: the segment's ends were placed where its rate
  // differs most from its neighbours', from the same requests.
  bool significant = false;
};

// The share of a load test's time in which a service violated its
// requirement, from segments of constant violation rate rather than fixed
// buckets (whose width decided a service at its threshold; parameters.md,
// twelfth result). `share` counts the violating segments' time over the
// series' span; `share_low` only those whose violation is significant,
// `share_high` all but those whose compliance is significant.
// Continuously Violated Requirements decides on share_low, so that a
// service whose requests sit at the threshold (a steady 1.1% over a P99
// requirement) is not called continuously violated by a coin flip;
// Application Hiccups on share (why not share_high: application_hiccups.cpp).
// With a span of 0 (one request, or all at one instant) segments weigh
// by their requests.
struct ViolatedTime {
  std::vector<ViolationSegment> segments;
  double share = 0;
  double share_low = 0;
  double share_high = 0;
};
ViolatedTime violated_time(const std::vector<TimedValue>& series, const Requirement& req,
                           double alpha);

// "violated an estimated 58% of the time (...)" for an evidence's detail.
std::string describe_violated_time(const ViolatedTime& v, const Requirement& req);

struct Increase {
  stats::TTestResult test;
  bool significant = false;  // p_greater < alpha and the mean rose
  double relative = 0;       // (mean_b - mean_a) / mean_a: the effect size
  // Mann-Whitney U, one-sided (b tends to be larger): reported next to the
  // t-test as a distribution-free cross-check for skewed response times;
  // it does not change the decision.
  double mann_whitney_p = 1;
};

// Welch's t-test on the raw samples. (The thesis bootstraps both samples
// and t-tests the bootstrap means; that p-value shrinks with the number of
// resamples, so we test the samples themselves: with the sample sizes of
// load tests the means are normal by the CLT. See docs/diagnose/heuristics.md.)
// `min_relative` additionally requires a practically relevant increase.
Increase test_increase(const std::vector<double>& a, const std::vector<double>& b, double alpha,
                       double min_relative);

Evidence increase_evidence(const Increase& inc, const std::string& location,
                           const std::string& data);

// Per-key samples of a numeric field of a log record class in each
// experiment of a series; `error` names what was missing.
struct KeyedSeries {
  std::vector<std::map<std::string, std::vector<double>>> per_step;  // step -> key -> values
  std::string error;
};
KeyedSeries keyed_series(const std::vector<const Experiment*>& series, const std::string& cls,
                         const std::string& probe, const std::string& value_field,
                         const std::string& key_field, double scale,
                         std::string (*key_of)(std::string_view) = nullptr);

// Mean CPU utilization (0..1) of an experiment from CPUUtilizationRecord,
// and the number of cores: distinct cpuIDs other than the aggregate "all"
// (0 when only "all" was sampled); false when there are no records.
// servers_for() picks the queueing models' server count from it.
// With `per_instant`, also the utilization at each sampling instant, in
// time order (of the records the mean counts: the aggregate where it was
// sampled, else the mean over the counted cores).
bool cpu_utilization(const Experiment& e, double* utilization, int* cores, std::string* error,
                     std::vector<double>* per_instant = nullptr);

// Upper (1 - alpha) confidence bound of a mean utilization measured at
// sampling instants: the series' mean plus t(1 - alpha, df) times its
// error (stats::series_mean_error: batch means from 20 instants, else the
// instants' standard error), scaled to `mean` (the measured utilization
// the series stands for) and capped at 1. `mean` itself with fewer than
// two instants or an idle series.
double utilization_upper_bound(const std::vector<double>& series, double mean, double alpha);

// The lower (1 - alpha) bound, the same way: the mean minus t times its
// error, scaled to `mean`, floored at 0.
double utilization_lower_bound(const std::vector<double>& series, double mean, double alpha);

// Servers of the queueing models: the config's `cores`, else the cores the
// CPU sampler saw, else run.json's `cores` (the measuring machine), else 1.
int servers_for(const Context& ctx, int sampled_cores);

// The database server's own measurements in an experiment: the database
// sampler's rows of samples.csv (docs/diagnose/experiment-data.md).
struct DatabaseServerSamples {
  bool present = false;    // a database sampler ran for this experiment
  std::string error;       // it failed: why (then nothing below is set)
  double cpu_s = -1;       // the server's CPU seconds in the stable phase; -1: not visible
  std::string cpu_reason;  // why cpu_s is unknown
  size_t samples = 0;      // sampling instants
  int cpus = 0;            // CPUs the server may run on (its affinity); 0: unknown
  std::vector<double> cpu_per_instant;  // the server's CPU seconds per instant, in time order
  // Locked object -> backends waiting for it at each sampling instant (0
  // where nobody waited), so every lock has `samples` values.
  std::map<std::string, std::vector<double>> lock_waiting;
};
DatabaseServerSamples database_server_samples(const Experiment& e);

// The message broker's own measurements in an experiment: the broker
// sampler's rows of samples.csv (source "redis").
struct BrokerSamples {
  bool present = false;  // a broker sampler ran for this experiment
  std::string error;     // it failed: why (then nothing below is set)
  double messages = 0;   // messages put into the broker in the stable phase
  double cpu_s = 0;      // the broker's CPU seconds in the stable phase
  size_t samples = 0;    // sampling instants
  // Queue -> its length at each sampling instant (0 where it was gone),
  // so every queue has `samples` values.
  std::map<std::string, std::vector<double>> queue_length;
};
BrokerSamples broker_samples(const Experiment& e);

// Services that violate their requirement in `e`.
std::vector<std::string> violating_services(const Experiment& e, const Settings& s);

// The records' "duration" fields in ms (records without one are skipped).
std::vector<double> durations_ms(const LogRecords& recs);

// How much one experiment's single-user mean of a service ("" = all
// services) varies from experiment to experiment: the standard deviation
// of its means over the run's single-user experiments (the single-user
// test, a scaling series' first step, the Ramp's windows), with their
// count - 1 degrees of freedom. A threshold computed from one of them
// carries this noise (tc10's CPU-bound service: 6.00, 6.57, 6.27, 6.83,
// 6.08, 6.06 ms in six experiments of one run, while each mean's own error
// was 0.05-0.33 ms). With one such experiment, `single`'s own mean's error.
stats::MeanError demand_noise(const ExperimentData& data, const std::string& service,
                              const std::vector<double>& single);

// Orders a node's evidence for the report: the findings by effect size,
// largest first, then what was checked and not found, likewise, so a
// reader sees why (docs/diagnose/report.md). Returns the findings' count.
size_t findings_then_checked(std::vector<Evidence>& findings, std::vector<Evidence> checked);

// Whether a statement seen in a service's requests is one of its queries
// or came along with requests attributed to the wrong trace: under "every
// ambiguous match is wrong", the number of the service's requests that
// issue it is at most Binomial(ambiguous, p), p = the share of the other
// services' requests that issue it. Returns the one-sided p-value
// P(X >= with_query); the statement belongs to the service when it is
// below alpha. 1 when no request issues it; 0 when more do than there are
// ambiguous requests, or when no other service issues it.
double misattribution_p(size_t with_query, size_t ambiguous, double p_elsewhere);

// Whether messaging is busy at a load step, decided from the data rather
// than an absolute send time (which was set for one case): the sends of
// `step` take at least `min_share` of the summed response time of its
// requests, and they take significantly longer than at the lowest load
// (`lowest`; one-sided Welch, alpha). A lock or a saturated CPU that
// flattens every throughput leaves sends a sliver of the response time
// (tc21: 0.011 ms per send; tc23: 0.4%); a full queue makes them the bulk
// (tc19, tc20: 49-94%).
struct MessagingBusy {
  bool busy = false;
  double send_ms = 0;    // mean send time at the step
  double share = 0;      // sends' share of the summed response time
  double p_greater = 1;  // Welch's one-sided p, step against the lowest load
  std::string error;     // the records could not be read
};
MessagingBusy messaging_busy(const Experiment& lowest, const Experiment& step, double alpha,
                             double min_share);

std::string fmt(double v, int precision = 3);

}  // namespace sonde::diagnose::heuristics
