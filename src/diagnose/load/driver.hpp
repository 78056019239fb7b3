// The load driver: virtual users sending a usage profile's requests to a
// system under test over real sockets (docs/diagnose/load.md).
//
// Closed workload (default): `users` virtual users, each sending a request,
// waiting for the answer and thinking; users start spread evenly over the
// ramp-up. Open workload (`arrival_rate` > 0): requests arrive as a Poisson
// process at that rate and `users` connections serve them; a request's
// start is its scheduled arrival, so time spent waiting for a free
// connection counts (no coordinated omission).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "diagnose/load/profile.hpp"

namespace sonde::diagnose::load {

struct LoadOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  int users = 1;
  double ramp_up_s = 0;    // users start spread over this time
  double duration_s = 10;  // after the ramp-up; 0 = until requests_per_user is reached
  double cool_down_s = 0;  // load keeps running, unmeasured, after the stable phase
  std::uint64_t requests_per_user =
      0;                    // closed workload: stop a user after this many (0 = no limit)
  double arrival_rate = 0;  // requests per second; > 0 selects the open workload
  int timeout_ms = 30000;   // per request
  std::uint64_t seed = 1;
  const std::atomic<bool>* cancel = nullptr;  // set from outside to stop early
  // Wait for stability after the ramp-up (timed runs; 0 = no wait): the
  // stable phase begins once the median response time of the last
  // `stability_window_s` differs from the window before by at most
  // `stability_tolerance` (relative), or after `stability_max_s` at most.
  // The first window is the ramp-up's last. A window needs
  // kStabilityMinRequests answers to count.
  double stability_max_s = 0;
  double stability_window_s = 1;
  double stability_tolerance = 0.2;
  // Called (from the driver's control thread) when the stable phase begins
  // and ends, e.g. to switch probes on and off.
  using Callback = std::function<void(std::int64_t epoch_ns)>;
  Callback on_stable_begin;
  Callback on_stable_end;
};

struct RequestRecord {
  std::int64_t start_ns = 0;  // epoch ns, client side (open workload: the scheduled arrival)
  // When the request was written to its connection: start_ns in the closed
  // workload; in the open workload later by the time the arrival waited
  // for a free connection in the driver.
  std::int64_t sent_ns = 0;
  std::int64_t end_ns = 0;
  int user = 0;
  std::string service;  // the profile's request name
  int status = 0;       // HTTP status, 0 = connection error
};

struct LoadResult {
  std::vector<RequestRecord> requests;  // every request, all phases, in completion order per user
  std::int64_t stable_begin_ns = 0;
  std::int64_t stable_end_ns = 0;
  std::string first_error;  // the first connection error seen, if any
  bool cancelled = false;
  // The stability wait (LoadOptions::stability_max_s > 0): how long it took
  // after the ramp-up, and whether the response time settled (false: the
  // stable phase began at the limit without it).
  double stability_wait_s = 0;
  bool stability_reached = false;
  std::string stability_note;  // why it was not reached ("" when it was, or when cancelled)

  // Requests that completed inside the stable phase.
  std::vector<RequestRecord> stable() const;
};

inline constexpr std::size_t kStabilityMinRequests = 5;

std::int64_t epoch_ns();

// Runs the workload to its end (or cancellation) and returns every request.
LoadResult run_load(const UsageProfile& profile, const LoadOptions& options);

// requests.csv of docs/diagnose/experiment-data.md: header, then
// start_ns,end_ns,user,service,status,sent_ns. Throws std::runtime_error on I/O failure.
void write_requests_csv(const std::string& path, const std::vector<RequestRecord>& requests);

// Counts requests that failed (status 0 or >= 500).
std::uint64_t count_errors(const std::vector<RequestRecord>& requests);

}  // namespace sonde::diagnose::load
