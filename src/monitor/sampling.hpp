// Runs the configured samplers on the writer thread every sampler period.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "format/record.hpp"
#include "monitor/config.hpp"

namespace sonde::monitor {

namespace samplers {
class Sampler;
}

class Sampling {
 public:
  using Emit = std::function<void(const format::Record&)>;
  Sampling(const Config& config, Emit emit);
  ~Sampling();
  void poll(int64_t now_ms);
  // When poll() next has work (INT64_MAX without samplers): the writer's
  // idle sleep ends then.
  int64_t next_due_ms() const;

 private:
  const Config& config_;
  Emit emit_;
  std::vector<std::unique_ptr<samplers::Sampler>> samplers_;
  std::vector<format::Record> out_;
  std::map<std::string_view, std::string> reported_errors_;
  int64_t next_ms_ = 0;
};

}  // namespace sonde::monitor
