// `sonde load`: drives HTTP load against a running service with the
// diagnose layer's load driver and writes requests.csv (docs/diagnose/load.md).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <numeric>

#include "cli/command.hpp"
#include "diagnose/load/driver.hpp"

namespace sonde::cli {
namespace {

struct LoadArgs {
  std::string target;
  std::string profile;
  std::string out = "requests.csv";
  int users = 1;
  double duration = 10;
  double ramp_up = 0;
  std::uint64_t requests = 0;
  double rate = 0;
  int timeout_ms = 30000;
};

int run_load_command(const LoadArgs& a) {
  namespace load = sonde::diagnose::load;
  load::LoadOptions o;
  const auto colon = a.target.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    std::cerr << "sonde load: --target must be HOST:PORT, got '" << a.target << "'\n";
    return 2;
  }
  o.host = a.target.substr(0, colon);
  try {
    o.port = std::stoi(a.target.substr(colon + 1));
  } catch (const std::exception&) {
    o.port = -1;
  }
  if (o.port <= 0 || o.port > 65535) {
    std::cerr << "sonde load: --target: invalid port in '" << a.target << "'\n";
    return 2;
  }
  o.users = a.users;
  o.ramp_up_s = a.ramp_up;
  o.duration_s = a.requests > 0 && a.rate <= 0 ? 0 : a.duration;
  o.requests_per_user = a.requests;
  o.arrival_rate = a.rate;
  o.timeout_ms = a.timeout_ms;
  try {
    const auto profile = load::UsageProfile::load(a.profile);
    const auto result = load::run_load(profile, o);
    const auto measured = result.stable();
    load::write_requests_csv(a.out, measured);
    const auto errors = load::count_errors(measured);
    std::vector<double> ms;
    for (const auto& r : measured) ms.push_back(static_cast<double>(r.end_ns - r.start_ns) / 1e6);
    std::sort(ms.begin(), ms.end());
    const double seconds = static_cast<double>(result.stable_end_ns - result.stable_begin_ns) / 1e9;
    auto pct = [&](double p) {
      return ms.empty() ? 0.0
                        : ms[static_cast<std::size_t>(p * static_cast<double>(ms.size() - 1))];
    };
    std::printf(
        "%zu requests in %.1f s (%.1f/s), %llu errors; response time ms: median %.2f, p95 %.2f, "
        "max %.2f\n",
        measured.size(), seconds,
        seconds > 0 ? static_cast<double>(measured.size()) / seconds : 0.0,
        static_cast<unsigned long long>(errors), pct(0.5), pct(0.95), ms.empty() ? 0.0 : ms.back());
    std::printf("requests: %s\n", a.out.c_str());
    if (!result.first_error.empty())
      std::fprintf(stderr, "sonde load: first error: %s\n", result.first_error.c_str());
    // Every request failing means the target is not there: say so in the status.
    return !measured.empty() && errors == measured.size() ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "sonde load: " << e.what() << "\n";
    return 1;
  }
}

void setup_load(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<LoadArgs>();
  app.add_option("--target", args->target, "HOST:PORT of the service")->required();
  app.add_option("--profile", args->profile, "usage profile (JSON, docs/diagnose/load.md)")
      ->required();
  app.add_option("--users", args->users, "virtual users (closed workload) or connections (open)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--duration", args->duration, "seconds of measured load after the ramp-up")
      ->check(CLI::PositiveNumber);
  app.add_option("--ramp-up", args->ramp_up, "seconds over which the users start")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--requests", args->requests,
                 "closed workload: requests per user, then stop (replaces --duration)");
  app.add_option("--rate", args->rate, "open workload: requests per second (Poisson arrivals)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--timeout-ms", args->timeout_ms, "per-request timeout")
      ->check(CLI::Range(1, 3600000));
  app.add_option("--out", args->out, "requests.csv to write");
  app.callback([args, &exit_code] { exit_code = run_load_command(*args); });
}

SONDE_COMMAND("load", "drive HTTP load against a service and record every request", setup_load);

}  // namespace
}  // namespace sonde::cli
