#include "monitor/sampling.hpp"

#include <cstdio>
#include <limits>

#include "monitor/clock.hpp"
#include "monitor/process_info.hpp"
#include "monitor/samplers/make_samplers.hpp"

namespace sonde::monitor {

Sampling::Sampling(const Config& config, Emit emit) : config_(config), emit_(std::move(emit)) {
  if (config_.samplers.empty()) return;
  std::string error;
  samplers_ = samplers::make_samplers(config_.samplers, describe_process(config_).hostname, &error);
  if (!error.empty()) std::fprintf(stderr, "sonde: samplers: %s\n", error.c_str());
}

Sampling::~Sampling() = default;

int64_t Sampling::next_due_ms() const {
  return samplers_.empty() ? std::numeric_limits<int64_t>::max() : next_ms_;
}

void Sampling::poll(int64_t now_ms) {
  if (samplers_.empty() || now_ms < next_ms_) return;
  next_ms_ = now_ms + config_.sampler_period_ms;
  int64_t now_ns = epoch_ns_now();
  for (auto& s : samplers_) {
    out_.clear();
    s->sample(now_ns, out_);
    for (const format::Record& r : out_) emit_(r);
    // Say it when a sampler starts failing or fails differently, not every period.
    std::string& reported = reported_errors_[s->name()];
    if (s->last_error() != reported) {
      reported = s->last_error();
      if (!reported.empty()) {
        std::fprintf(stderr, "sonde: sampler %.*s: %s\n", static_cast<int>(s->name().size()),
                     s->name().data(), reported.c_str());
      }
    }
  }
}

}  // namespace sonde::monitor
