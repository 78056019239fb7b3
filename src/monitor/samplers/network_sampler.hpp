// Traffic per network interface from /proc/net/dev (the network namespace of
// the monitored process), as sonde.record.system.NetworkInterfaceRecord: bytes
// and packets per second over the sampling period, plus the byte counters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "format/schema.hpp"
#include "monitor/samplers/sampler.hpp"

namespace sonde::monitor::samplers {

class NetworkSampler final : public Sampler {
 public:
  explicit NetworkSampler(std::string hostname, std::string proc_root = "/proc");

  std::string_view name() const override { return "network"; }
  // Records from the second call on; an interface appearing later, or whose
  // counters were reset, is primed first and reported from its next sample.
  void sample(int64_t now_epoch_ns, std::vector<format::Record>& out) override;

  struct Counters {
    uint64_t rx_bytes = 0, rx_packets = 0, tx_bytes = 0, tx_packets = 0;
  };

 private:
  void sample_once(int64_t now_epoch_ns, std::vector<format::Record>& out);

  const format::RecordSchema* schema_;
  std::map<std::string_view, Counters> previous_;  // keys interned
  int64_t previous_ns_ = 0;
  std::string text_;
};

}  // namespace sonde::monitor::samplers
