// Samplers: periodic measurements of the machine and of the monitored process,
// taken by the monitor's writer thread every `sampler_period_ms`, never by the
// probes. Each sampler reads a few files under /proc and turns them into
// generic format::Records that go into the same log as the trace events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "format/record.hpp"
#include "format/string_pool.hpp"

namespace sonde::monitor::samplers {

// Not thread-safe: each sampler has one caller, the writer thread.
class Sampler {
 public:
  virtual ~Sampler() = default;
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // The name used in the `samplers` configuration key ("cpu", "memory", ...).
  virtual std::string_view name() const = 0;

  // Appends this period's records to `out`. Rates and utilisations need two
  // readings, so the first call may only remember counters and append nothing.
  // Never throws: a missing or malformed /proc file appends nothing for that
  // file and sets last_error().
  //
  // String values in the records are views into storage owned by this sampler;
  // they stay valid for the sampler's lifetime.
  virtual void sample(int64_t now_epoch_ns, std::vector<format::Record>& out) = 0;

  // One line describing what went wrong in the most recent sample() call, or
  // empty if it succeeded. Reset at the start of every call so the caller can
  // tell a transient failure from a lasting one.
  const std::string& last_error() const { return last_error_; }

 protected:
  Sampler(std::string hostname, std::string proc_root);

  std::string_view hostname() const { return hostname_; }
  // A path below the /proc root, e.g. path("stat") -> "/proc/stat".
  std::string path(std::string_view relative) const;
  // Owned copies of strings that records point to (cpu ids, device names).
  // Grows by each distinct name ever seen, which is small in practice.
  std::string_view intern(std::string_view s) { return strings_.intern(s); }

  // Adds a problem to last_error(); several are joined with "; ".
  void add_error(std::string_view message) noexcept;

  // Runs one sampling pass. Any exception (realistically only std::bad_alloc)
  // becomes last_error() and the records appended by the failed pass are
  // removed, so nothing half-built or thrown reaches the writer thread.
  template <typename Body>
  void guarded(std::vector<format::Record>& out, Body&& body) noexcept {
    last_error_.clear();
    const size_t before = out.size();
    try {
      body();
    } catch (const std::exception& e) {
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
      add_error(e.what());
    } catch (...) {
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
      add_error("unknown exception");
    }
  }

 private:
  format::StringPool strings_;  // declared first: hostname_ points into it
  std::string_view hostname_;
  std::string proc_root_;
  std::string last_error_;
};

}  // namespace sonde::monitor::samplers
