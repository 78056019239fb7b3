// Samples a PostgreSQL server during an experiment's stable phase (the
// thesis' database-server samplers, DynamicSpotter's DB satellites): every
// interval one query of pg_stat_activity joined with pg_locks, plus the CPU
// time of the server's processes from /proc (when the server runs on this
// machine). Rows go to the experiment's samples.csv
// (docs/diagnose/experiment-data.md):
//   cpu_s         CPU seconds the server's processes used since the previous sample
//   active        backends executing a statement
//   lock_waiting  backends waiting for a heavyweight lock, key = the locked
//                 relation (or the lock type, e.g. "transactionid"); one row per
//                 key seen so far, 0 when nobody waits for it now
//   transactions  commits + rollbacks since the previous sample (pg_stat_database)
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "diagnose/experiment_data.hpp"

namespace sonde::diagnose::database {

using Sample = SampledValue;  // source is set by write_samples_csv

class PostgresSampler {
 public:
  PostgresSampler(std::string conninfo, int interval_ms);
  ~PostgresSampler();
  PostgresSampler(const PostgresSampler&) = delete;
  PostgresSampler& operator=(const PostgresSampler&) = delete;

  // Connects and starts sampling; a connection failure is kept in error().
  void start();
  void stop();
  // After stop(): what was sampled, and why sampling failed ("" if it did not).
  const std::vector<Sample>& samples() const { return samples_; }
  const std::string& error() const { return error_; }
  // "" or why the server's CPU could not be read (e.g. a remote server).
  const std::string& cpu_error() const { return cpu_error_; }
  // CPUs the server's processes may run on (their affinity, united); 0
  // when not visible. The server's CPU capacity, if it was pinned.
  int cpus() const { return cpus_; }

 private:
  void loop(void* connection);
  bool sample_once(void* connection);

  std::string conninfo_;
  int interval_ms_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::vector<Sample> samples_;
  std::string error_;
  std::string cpu_error_;
  std::map<int, double> last_cpu_s_;  // pid -> its CPU seconds at the previous sample
  std::map<std::string, bool> lock_keys_;
  double last_transactions_ = -1;
  bool first_ = true;
  int cpus_ = 0;
};

// Writes `samples` of `source` as CSV (header time_ns,source,metric,key,value);
// `append`: after another source's rows, without a second header.
void write_samples_csv(const std::string& path, const std::string& source,
                       const std::vector<Sample>& samples, bool append = false);

}  // namespace sonde::diagnose::database
