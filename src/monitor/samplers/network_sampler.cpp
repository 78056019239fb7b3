#include "monitor/samplers/network_sampler.hpp"

#include <utility>

#include "monitor/samplers/proc_text.hpp"
#include "monitor/samplers/record_builder.hpp"
#include "monitor/samplers/system_records.hpp"

namespace sonde::monitor::samplers {

NetworkSampler::NetworkSampler(std::string hostname, std::string proc_root)
    : Sampler(std::move(hostname), std::move(proc_root)),
      schema_(format::find_builtin_schema(system_class::kNetworkInterface)) {}

void NetworkSampler::sample(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  guarded(out, [&] { sample_once(now_epoch_ns, out); });
}

void NetworkSampler::sample_once(int64_t now_epoch_ns, std::vector<format::Record>& out) {
  if (schema_ == nullptr) return;  // format library without system schemas
  std::string error;
  const std::string file = path("net/dev");
  if (!read_text_file(file, &text_, &error)) {
    add_error(error);
    return;
  }

  // Two header lines (recognised by their '|' column separators), then
  // "  name: 8 receive counters 8 transmit counters". Old kernels print no
  // space after the colon, so the name ends at the colon, not at a blank.
  std::vector<std::pair<std::string_view, Counters>> current;
  std::vector<std::string_view> tokens;
  bool saw_header = false;
  std::string problem;
  size_t line_no = 0;
  for_each_line(text_, [&](std::string_view line) {
    ++line_no;
    if (!problem.empty() || trim(line).empty()) return;
    if (line.find('|') != std::string_view::npos) {
      saw_header = true;
      return;
    }
    const size_t colon = line.find(':');
    const std::string_view iface =
        colon == std::string_view::npos ? "" : trim(line.substr(0, colon));
    if (!iface.empty()) split_fields(line.substr(colon + 1), tokens);
    Counters c;
    if (iface.empty() || tokens.size() < 16 || !parse_u64(tokens[0], &c.rx_bytes) ||
        !parse_u64(tokens[1], &c.rx_packets) || !parse_u64(tokens[8], &c.tx_bytes) ||
        !parse_u64(tokens[9], &c.tx_packets)) {
      problem = "line " + std::to_string(line_no) + ": malformed";
      return;
    }
    current.emplace_back(intern(iface), c);
  });
  if (problem.empty() && !saw_header) problem = "no header line";
  if (!problem.empty()) {
    add_error(file + ": " + problem);
    return;
  }

  const bool have_interval = !previous_.empty() && now_epoch_ns > previous_ns_;
  const double seconds =
      have_interval ? static_cast<double>(now_epoch_ns - previous_ns_) / 1e9 : 0.0;
  std::map<std::string_view, Counters> next;
  for (const auto& [iface, now] : current) {
    next[iface] = now;
    if (!have_interval) continue;
    const auto it = previous_.find(iface);
    if (it == previous_.end()) continue;
    const Counters& was = it->second;
    // A counter that went down means the interface was re-created (or a
    // 32-bit counter wrapped): the interval's traffic is unknown, so skip it.
    if (now.rx_bytes < was.rx_bytes || now.rx_packets < was.rx_packets ||
        now.tx_bytes < was.tx_bytes || now.tx_packets < was.tx_packets) {
      continue;
    }
    RecordBuilder b(schema_);
    b.set_int("timestamp", now_epoch_ns)
        .set_string("hostname", hostname())
        .set_string("interfaceName", iface)
        .set_double("rxBytesPerSecond", static_cast<double>(now.rx_bytes - was.rx_bytes) / seconds)
        .set_double("txBytesPerSecond", static_cast<double>(now.tx_bytes - was.tx_bytes) / seconds)
        .set_double("rxPacketsPerSecond",
                    static_cast<double>(now.rx_packets - was.rx_packets) / seconds)
        .set_double("txPacketsPerSecond",
                    static_cast<double>(now.tx_packets - was.tx_packets) / seconds)
        .set_int("rxBytesTotal", to_i64(now.rx_bytes))
        .set_int("txBytesTotal", to_i64(now.tx_bytes));
    out.push_back(b.take());
  }
  previous_ = std::move(next);
  previous_ns_ = now_epoch_ns;
}

}  // namespace sonde::monitor::samplers
