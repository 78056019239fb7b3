// `sonde serve LOG --listen HOST:PORT [--token T]`: the web UI and JSON API
// over the traces of a log (any log `sonde traces` reads). The log is read
// into memory once and re-read when its files change (--refresh), so the UI
// follows a collector that is still writing. See docs/serve.md.
//
// Exit status: 0 stopped by SIGINT/SIGTERM; 1 the log or the --diagnosis
// report cannot be read, or the address cannot be bound; 2 usage error (including a non-loopback
// address without --token).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>

#include "cli/command.hpp"
#include "serve/diagnosis_report.hpp"
#include "serve/live_api.hpp"
#include "serve/web_server.hpp"
#include "store/index_store.hpp"
#include "store/memory_store.hpp"

namespace sonde::cli {
namespace {

struct ServeCliOptions {
  std::string log;
  std::string listen = "127.0.0.1:8080";
  std::string token;
  double refresh_seconds = 2;
  std::string diagnosis;  // a report.json or the --out DIR of `sonde diagnose`
};

// The report of --diagnosis (unusable: exit 1), else LOG/diagnosis/report.json
// if present (unusable: a warning, and /api/diagnosis says why). False: stop.
bool load_diagnosis(const ServeCliOptions& o, serve::ServeOptions* options) {
  std::string path = o.diagnosis;
  const bool asked = !path.empty();
  std::error_code ec;
  if (!asked) {
    const std::filesystem::path beside = std::filesystem::path(o.log) / "diagnosis" / "report.json";
    if (!std::filesystem::is_directory(o.log, ec) || !std::filesystem::exists(beside, ec)) {
      return true;
    }
    path = beside.string();
  }
  auto loaded = serve::load_diagnosis_report(path);
  if (auto* report = std::get_if<std::shared_ptr<const serve::DiagnosisReport>>(&loaded)) {
    options->diagnosis = *report;
    return true;
  }
  const std::string& error = std::get<std::string>(loaded);
  if (asked) {
    std::cerr << "sonde serve: --diagnosis: " << error << "\n";
    return false;
  }
  std::cerr << "sonde serve: warning: not serving the diagnosis report: " << error << "\n";
  options->diagnosis_problem = "the diagnosis report is not usable: " + error;
  return true;
}

int run_serve(const ServeCliOptions& o) {
  serve::ServeOptions options;
  std::string error;
  if (!serve::parse_listen(o.listen, &options.host, &options.port, &error)) {
    std::cerr << "sonde serve: " << error << "\n";
    return 2;
  }
  options.token = o.token;
  options.context_log = o.log;
  if (!serve::is_loopback_host(options.host) && options.token.empty()) {
    std::cerr << "sonde serve: refusing to listen on '" << options.host
              << "': not a loopback address; give --token to allow other machines\n";
    return 2;
  }
  if (o.refresh_seconds < 0) {
    std::cerr << "sonde serve: --refresh needs seconds >= 0\n";
    return 2;
  }
  std::error_code ec;
  if (!std::filesystem::exists(o.log, ec)) {
    std::cerr << "sonde serve: cannot read '" << o.log << "': no such file or directory\n";
    return 1;
  }
  if (!load_diagnosis(o, &options)) return 1;
  if (serve::is_collector_dir(o.log)) options.collector_dir = o.log;

  // SIGINT/SIGTERM go to one waiting thread, which stops the server cleanly.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // A collector's DIR with index.sqlite, or a clickhouse:// URL, is served
  // from its index (live: every query reads the store); anything else is
  // read into memory and re-read every --refresh seconds.
  std::unique_ptr<store::TraceStore> indexed;
  std::unique_ptr<store::MemoryStore> memory;
  if (store::is_indexed_store(o.log)) {
    indexed = store::open_indexed_store(o.log, &error);
    if (!indexed) {
      std::cerr << "sonde serve: " << error << "\n";
      return 1;
    }
  } else {
    memory = std::make_unique<store::MemoryStore>(o.log);
    for (const auto& e : memory->load().errors) std::cerr << "sonde serve: error: " << e << "\n";
    for (const auto& w : memory->load().warnings)
      std::cerr << "sonde serve: warning: " << w << "\n";
    if (!memory->load().ok) return 1;
  }
  store::TraceStore& store = indexed ? *indexed : static_cast<store::TraceStore&>(*memory);

  serve::WebServer server(store, options);
  if (!server.bind(&error)) {
    std::cerr << "sonde serve: " << error << "\n";
    return 1;
  }
  const store::StoreInfo info = store.info();
  const bool v6 = options.host.find(':') != std::string::npos;
  std::cout << "sonde serve: " << info.traces << " traces from " << o.log << " on http://"
            << (v6 ? "[" + options.host + "]" : options.host) << ":" << server.port() << "/"
            << std::endl;
  // The optional views, so the user knows which tabs to expect.
  if (options.diagnosis) {
    std::cout << "sonde serve: diagnosis report " << options.diagnosis->file << std::endl;
  }
  if (!options.collector_dir.empty()) {
    std::cout << "sonde serve: live view of the collector writing " << options.collector_dir
              << std::endl;
  }

  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::atomic<bool> served{false};
  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    {
      std::lock_guard lock(mutex);
      if (stopping) return;
      stopping = true;
    }
    wake.notify_all();
    // Repeated until it takes: a signal that came before server.run() began
    // listening would otherwise be lost (httplib's stop() does nothing then).
    while (!served) {
      server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::thread refresher([&] {
    if (o.refresh_seconds == 0 || !memory) return;
    const auto period = std::chrono::duration<double>(o.refresh_seconds);
    std::unique_lock lock(mutex);
    while (!wake.wait_for(lock, period, [&] { return stopping; })) {
      lock.unlock();
      if (memory->refresh()) {
        for (const auto& e : memory->load().errors)
          std::cerr << "sonde serve: error: " << e << "\n";
      }
      lock.lock();
    }
  });
  server.run();
  served = true;
  {
    std::lock_guard lock(mutex);
    if (!stopping) {
      stopping = true;
      pthread_kill(signals.native_handle(), SIGTERM);  // wake the signal thread
    }
  }
  wake.notify_all();
  refresher.join();
  signals.join();
  return 0;
}

void setup_serve(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ServeCliOptions>();
  app.add_option("log", o->log, "The log: a .sonde file, a Kieker directory, a collector's DIR")
      ->required()
      ->type_name("LOG-or-DIR");
  app.add_option("--listen", o->listen, "Address to serve on (default 127.0.0.1:8080; port 0: any)")
      ->type_name("HOST:PORT");
  app.add_option("--token", o->token,
                 "Secret every request must carry; required to listen on a non-loopback address")
      ->type_name("TOKEN");
  app.add_option("--refresh", o->refresh_seconds,
                 "Re-read the log when it changed, checking every S seconds (default 2; 0: never)")
      ->type_name("S");
  app.add_option("--diagnosis", o->diagnosis,
                 "Also show this diagnosis report (report.json, or the --out DIR of sonde "
                 "diagnose); default: LOG/diagnosis/report.json if present")
      ->type_name("REPORT");
  app.footer(
      "Exit status: 0 stopped by a signal, 1 cannot read the log or the report, or bind; 2 usage "
      "error.");
  app.callback([o, &exit_code] { exit_code = run_serve(*o); });
}

}  // namespace

SONDE_COMMAND("serve", "Browse a log's traces in a web browser (web UI and JSON API)", setup_serve);

}  // namespace sonde::cli
