// `sonde listen --out LOG`: receives records from monitored processes that
// write Kieker's TCP protocol (sonde's tcp writer, Kieker's
// SingleSocketTcpWriter) and writes them as one log. Runs until SIGINT or
// SIGTERM, or until --connections connections have come and gone.
//
// Exit status: 0 ok; 1 cannot listen or the log cannot be written, or a
// client broke the protocol (its records up to the error are kept); 2 usage.

#include <atomic>
#include <charconv>
#include <iostream>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "cli/stop_on_signal.hpp"
#include "collect/record_listener.hpp"
#include "format/record_log_writer.hpp"

namespace sonde::cli {
namespace {

struct ListenOptions {
  std::string bind = "127.0.0.1";
  std::string port = "10133";
  std::string out;
  std::string to = "native";
  std::string connections = "0";
};

int run_listen(const ListenOptions& o) {
  collect::ListenerOptions options;
  options.bind_address = o.bind;
  if (!parse_number(o.port, &options.port)) {
    std::cerr << "sonde listen: --port needs a port number (0-65535), got '" << o.port << "'\n";
    return kUsage;
  }
  if (!parse_number(o.connections, &options.stop_after_connections)) {
    std::cerr << "sonde listen: --connections needs a number, got '" << o.connections << "'\n";
    return kUsage;
  }
  format::OutputFormat format;
  if (o.to == "native") {
    format = format::OutputFormat::kNative;
  } else if (o.to == "kieker-dat") {
    format = format::OutputFormat::kKiekerDat;
  } else if (o.to == "kieker-bin") {
    format = format::OutputFormat::kKiekerBin;
  } else {
    std::cerr << "sonde listen: unknown --to '" << o.to << "' (native, kieker-dat, kieker-bin)\n";
    return kUsage;
  }
  if (o.out.empty()) {
    std::cerr << "sonde listen: missing --out (the log to write)\n";
    return kUsage;
  }
  if (o.bind != "127.0.0.1" && o.bind.rfind("127.", 0) != 0) {
    std::cerr << "sonde listen: warning: listening on " << o.bind
              << ": anyone who can reach it can write into the log\n";
  }

  // Kieker's tools parse Kieker's signatures (docs/formats/operation-names.md).
  if (format != format::OutputFormat::kNative) options.names = format::NameForm::kKieker;
  std::unique_ptr<format::RecordLogWriter> log = format::open_record_log(format, o.out);
  collect::RecordListener listener(*log, options);
  if (const std::string error = listener.open(); !error.empty()) {
    std::cerr << "sonde listen: " << error << "\n";
    log->finish();
    return kFailed;
  }
  std::atomic<bool>& stop = stop_on_interrupt_or_terminate();
  // Tests and scripts read the port from this line (useful with --port 0).
  std::cerr << "sonde listen: listening on " << o.bind << ":" << listener.port() << ", writing "
            << o.out << std::endl;
  listener.run(stop);
  const std::string write_error = log->finish();

  // Every connection's, listed or not (closed ones beyond the last 1,000 are not).
  const bool protocol_errors = listener.clients_with_errors() > 0;
  const std::vector<collect::ClientStats> listed = listener.clients();
  for (const collect::ClientStats& c : listed) {
    std::cerr << "sonde listen: " << c.peer << ": " << c.records << " records, " << c.bytes
              << " bytes";
    if (!c.error.empty()) std::cerr << "; closed after a protocol error: " << c.error;
    std::cerr << "\n";
  }
  if (listener.clients_total() > listed.size()) {
    std::cerr << "sonde listen: " << listener.clients_total() - listed.size()
              << " earlier connections not listed (their records are in the total below)\n";
  }
  if (listener.unserved_connections() > 0) {
    std::cerr << "sonde listen: warning: " << listener.unserved_connections()
              << " connections still waiting for a slot (more than " << options.max_connections
              << " at once) when it stopped were not read (" << listener.unserved_bytes()
              << " bytes lost)\n";
  }
  std::cerr << "sonde listen: " << log->written() << " records written to " << o.out;
  if (log->rejected() > 0) std::cerr << " (" << log->rejected() << " rejected by the format)";
  std::cerr << "\n";
  if (!write_error.empty()) {
    std::cerr << "sonde listen: error: " << write_error << "\n";
    return kFailed;
  }
  return protocol_errors ? kFailed : kOk;
}

void setup_listen(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ListenOptions>();
  app.add_option("--out,-o", o->out, "The log to write")->type_name("LOG");
  app.add_option("--to", o->to, "native (default), kieker-dat or kieker-bin")->type_name("FORMAT");
  app.add_option("--bind", o->bind, "Address to listen on (default 127.0.0.1)")
      ->type_name("ADDRESS");
  app.add_option("--port", o->port, "TCP port (default 10133, Kieker's; 0 = any free port)")
      ->type_name("PORT");
  app.add_option("--connections", o->connections,
                 "Stop after N connections have closed (default 0: run until SIGINT/SIGTERM)")
      ->type_name("N");
  app.footer(
      "Exit status: 0 ok, 1 cannot listen, cannot write, or a client broke the protocol, 2 usage "
      "error.");
  app.callback([o, &exit_code] { exit_code = run_listen(*o); });
}

}  // namespace

SONDE_COMMAND("listen", "Receive records over Kieker's TCP protocol and write them as a log",
              setup_listen);

}  // namespace sonde::cli
