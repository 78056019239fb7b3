#include "diagnose/load/driver.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include "diagnose/load/http_client.hpp"
#include "stats/descriptive.hpp"

namespace sonde::diagnose::load {
namespace {

using Clock = std::chrono::steady_clock;

bool cancelled(const LoadOptions& o) { return o.cancel && o.cancel->load(); }

// Sleeps until `until` in short slices so cancellation is noticed quickly.
// Returns false if cancelled.
bool sleep_until(Clock::time_point until, const LoadOptions& o) {
  while (Clock::now() < until) {
    if (cancelled(o)) return false;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(20)));
  }
  return !cancelled(o);
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// CSV field: service names come from the profile, so quote when needed.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

struct Shared {
  std::mutex mutex;
  std::string first_error;
  // When the users stop (steady clock ticks): moves when the stability
  // wait ends, so it is read on every request.
  std::atomic<Clock::rep> stop_at{0};
  // While the stability wait watches: response times [ms] completed since
  // it last looked.
  std::atomic<bool> tracking{false};
  std::vector<double> recent;
  void error(const std::string& e) {
    std::lock_guard lock(mutex);
    if (first_error.empty()) first_error = e;
  }
  void completed(const RequestRecord& r) {
    // Answers only, as the heuristics count them (Request::ok): fast errors
    // would pull the median down.
    if (!tracking.load(std::memory_order_relaxed) || r.status <= 0 || r.status >= 500) return;
    std::lock_guard lock(mutex);
    recent.push_back(static_cast<double>(r.end_ns - r.start_ns) / 1e6);
  }
  std::vector<double> take_recent() {
    std::lock_guard lock(mutex);
    return std::exchange(recent, {});
  }
  Clock::time_point stop_time() const { return Clock::time_point(Clock::duration(stop_at.load())); }
  void set_stop_time(Clock::time_point t) { stop_at = t.time_since_epoch().count(); }
};

RequestRecord send_one(HttpConnection& connection, ProfileWalker& walker, int user,
                       std::uint64_t iteration, Shared& shared) {
  const RequestTemplate& t = walker.next();
  const std::string target = expand(t.path, user, iteration, walker.rng());
  const std::string body = expand(t.body, user, iteration, walker.rng());
  RequestRecord r;
  r.user = user;
  r.service = t.name;
  std::string error;
  r.start_ns = epoch_ns();
  r.sent_ns = r.start_ns;
  r.status = connection.request(t.method, target, body, error);
  r.end_ns = epoch_ns();
  if (r.status == 0) shared.error(error);
  shared.completed(r);
  return r;
}

void closed_user(const UsageProfile& profile, const LoadOptions& o, int user,
                 Clock::time_point start_at, std::vector<RequestRecord>& out, Shared& shared) {
  if (!sleep_until(start_at, o)) return;
  HttpConnection connection(o.host, o.port, o.timeout_ms);
  ProfileWalker walker(profile, o.seed * 1000003 + static_cast<std::uint64_t>(user));
  for (std::uint64_t i = 0; o.requests_per_user == 0 || i < o.requests_per_user; ++i) {
    if (cancelled(o) || (o.duration_s > 0 && Clock::now() >= shared.stop_time())) break;
    out.push_back(send_one(connection, walker, user, i, shared));
    const double think = walker.think_time_ms();
    if (think > 0 && !sleep_until(Clock::now() + seconds(think / 1000), o)) break;
  }
}

// Open workload: a scheduler thread queues arrival times, users serve them.
struct Arrivals {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Clock::time_point> due;
  bool done = false;
};

void open_user(const UsageProfile& profile, const LoadOptions& o, int user, Arrivals& arrivals,
               std::vector<RequestRecord>& out, Shared& shared) {
  HttpConnection connection(o.host, o.port, o.timeout_ms);
  ProfileWalker walker(profile, o.seed * 1000003 + static_cast<std::uint64_t>(user));
  for (std::uint64_t i = 0;; ++i) {
    Clock::time_point due;
    {
      std::unique_lock lock(arrivals.mutex);
      arrivals.ready.wait(lock, [&] { return arrivals.done || !arrivals.due.empty(); });
      if (arrivals.due.empty()) return;
      due = arrivals.due.front();
      arrivals.due.pop_front();
    }
    if (!sleep_until(due, o)) return;
    const std::int64_t scheduled =
        epoch_ns() -
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - due).count();
    RequestRecord r = send_one(connection, walker, user, i, shared);
    r.start_ns = std::min(r.start_ns, scheduled);
    out.push_back(std::move(r));
  }
}

// The stability wait after the ramp-up: watches windows of completed
// requests until two counted windows in a row (at least
// kStabilityMinRequests answers each) have medians within the tolerance,
// or the limit passes; the last window is cut short at the limit. The
// caller started tracking one window before `from`.
void wait_for_stability(const LoadOptions& o, Shared& shared, Clock::time_point from,
                        LoadResult& result) {
  const Clock::duration window = seconds(o.stability_window_s);
  const Clock::time_point limit = from + seconds(o.stability_max_s);
  double previous = -1;  // median of the last window that had enough answers
  std::size_t counted = 0;
  bool settled = false;
  // The window that ends at `from` (the ramp-up's last) counts first.
  for (Clock::time_point end = from;; end = std::min(end + window, limit)) {
    if (end > from && !sleep_until(end, o)) break;
    const std::vector<double> answers = shared.take_recent();
    if (answers.size() >= kStabilityMinRequests) {
      ++counted;
      const double m = stats::middle_value(answers);
      if (previous >= 0 && std::abs(m - previous) <= o.stability_tolerance * previous) {
        settled = true;
        break;
      }
      previous = m;
    }
    if (end >= limit) break;
  }
  shared.tracking = false;
  result.stability_reached = settled;
  result.stability_wait_s = std::chrono::duration<double>(Clock::now() - from).count();
  if (!settled && !cancelled(o)) {
    result.stability_note = counted < 2
                                ? "too few answers to judge: " + std::to_string(counted) +
                                      " window(s) had " + std::to_string(kStabilityMinRequests) +
                                      " or more (a longer stability_window_s holds more)"
                                : "the response time did not settle";
  }
}

}  // namespace

std::int64_t epoch_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<RequestRecord> LoadResult::stable() const {
  std::vector<RequestRecord> in;
  for (const auto& r : requests)
    if (r.end_ns >= stable_begin_ns && r.end_ns <= stable_end_ns) in.push_back(r);
  return in;
}

std::uint64_t count_errors(const std::vector<RequestRecord>& requests) {
  return static_cast<std::uint64_t>(
      std::count_if(requests.begin(), requests.end(),
                    [](const RequestRecord& r) { return r.status == 0 || r.status >= 500; }));
}

LoadResult run_load(const UsageProfile& profile, const LoadOptions& o) {
  if (o.users < 1) throw std::invalid_argument("load: users must be at least 1");
  if (o.port <= 0 || o.port > 65535)
    throw std::invalid_argument("load: invalid port " + std::to_string(o.port));
  if (o.duration_s <= 0 && (o.requests_per_user == 0 || o.arrival_rate > 0))
    throw std::invalid_argument(
        "load: give a duration or (closed workload) a request count per user");
  LoadResult result;
  Shared shared;
  std::vector<std::vector<RequestRecord>> per_user(static_cast<std::size_t>(o.users));
  const std::int64_t launch_ns = epoch_ns();
  const Clock::time_point t0 = Clock::now();
  if (o.stability_max_s < 0 || o.stability_window_s <= 0 || o.stability_tolerance < 0)
    throw std::invalid_argument(
        "load: the stability wait needs max >= 0, window > 0, tolerance >= 0");
  Clock::time_point stable_at = t0 + seconds(o.ramp_up_s);
  Clock::time_point stable_until = stable_at + seconds(o.duration_s);
  // Until the stability wait ends, the users run for the longest it may take.
  const bool stability_wait = o.stability_max_s > 0 && o.duration_s > 0;
  shared.set_stop_time(stable_until + seconds(o.cool_down_s) +
                       (stability_wait ? seconds(o.stability_max_s + o.stability_window_s)
                                       : Clock::duration::zero()));
  if (stability_wait && o.ramp_up_s <= o.stability_window_s) shared.tracking = true;
  std::vector<std::thread> threads;
  Arrivals arrivals;
  const bool open = o.arrival_rate > 0;
  for (int u = 0; u < o.users; ++u) {
    auto& out = per_user[static_cast<std::size_t>(u)];
    if (open) {
      threads.emplace_back([&, u] { open_user(profile, o, u, arrivals, out, shared); });
    } else {
      const auto start_at = t0 + seconds(o.ramp_up_s * u / o.users);
      threads.emplace_back([&, u, start_at] { closed_user(profile, o, u, start_at, out, shared); });
    }
  }
  std::thread scheduler;
  if (open) {
    scheduler = std::thread([&] {
      std::mt19937_64 rng(o.seed);
      std::exponential_distribution<double> gap(o.arrival_rate);
      Clock::time_point next = t0;
      while (!cancelled(o)) {
        next += seconds(gap(rng));
        if (next >= shared.stop_time()) break;
        {
          std::lock_guard lock(arrivals.mutex);
          arrivals.due.push_back(next);
        }
        arrivals.ready.notify_one();
        // Stay at most a second ahead of time so the queue stays short.
        sleep_until(next - std::chrono::seconds(1), o);
      }
      {
        std::lock_guard lock(arrivals.mutex);
        arrivals.done = true;
      }
      arrivals.ready.notify_all();
    });
  }
  // Phase callbacks (stable begin/end) from this thread. A count-limited
  // closed run without a duration is "stable" from start to finish.
  const bool timed = o.duration_s > 0;
  result.stable_begin_ns =
      epoch_ns() +
      std::chrono::duration_cast<std::chrono::nanoseconds>(stable_at - Clock::now()).count();
  if (timed) {
    if (stability_wait && !shared.tracking) {
      // Watch the ramp-up's last window too.
      sleep_until(stable_at - seconds(o.stability_window_s), o);
      shared.take_recent();
      shared.tracking = true;
    }
    if (sleep_until(stable_at, o) && stability_wait) {
      wait_for_stability(o, shared, stable_at, result);
      stable_at = Clock::now();
      stable_until = stable_at + seconds(o.duration_s);
      shared.set_stop_time(stable_until + seconds(o.cool_down_s));
    }
    if (!cancelled(o)) {
      result.stable_begin_ns = epoch_ns();
      if (o.on_stable_begin) o.on_stable_begin(result.stable_begin_ns);
      sleep_until(stable_until, o);
      result.stable_end_ns = epoch_ns();
      if (o.on_stable_end) o.on_stable_end(result.stable_end_ns);
    }
  } else {
    result.stable_begin_ns = launch_ns;
    if (o.on_stable_begin) o.on_stable_begin(result.stable_begin_ns);
  }
  if (scheduler.joinable()) scheduler.join();
  for (auto& t : threads) t.join();
  if (!timed) {
    result.stable_end_ns = epoch_ns();
    if (o.on_stable_end) o.on_stable_end(result.stable_end_ns);
  }
  result.cancelled = cancelled(o);
  if (result.stable_end_ns == 0) result.stable_end_ns = epoch_ns();
  for (auto& v : per_user) result.requests.insert(result.requests.end(), v.begin(), v.end());
  std::sort(result.requests.begin(), result.requests.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.start_ns < b.start_ns; });
  result.first_error = shared.first_error;
  return result;
}

void write_requests_csv(const std::string& path, const std::vector<RequestRecord>& requests) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "start_ns,end_ns,user,service,status,sent_ns\n";
  for (const auto& r : requests)
    out << r.start_ns << ',' << r.end_ns << ',' << r.user << ',' << csv_field(r.service) << ','
        << r.status << ',' << r.sent_ns << '\n';
  out.flush();
  if (!out) throw std::runtime_error("error writing " + path);
}

}  // namespace sonde::diagnose::load
