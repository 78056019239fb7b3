// Starts Debian's clickhouse-server on 127.0.0.1 on a free port with a
// temporary data directory (HTTP interface only), and stops it again.
// Shared by the store and collector tests.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "store/clickhouse_client.hpp"

namespace sonde::store::test {

class ClickHouseServer {
 public:
  static constexpr const char* kBinary = "/usr/sbin/clickhouse-server";

  ClickHouseServer() {
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "sonde-clickhouse-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    if (!fs::exists(kBinary)) {
      error_ = std::string(kBinary) + " is missing: run scripts/install-deps.sh";
      return;
    }
    port_ = free_port();
    const std::string config = dir_ + "/config.xml";
    std::ofstream(config) << "<?xml version=\"1.0\"?>\n<yandex>\n"
                          << "  <logger><level>warning</level><console>1</console></logger>\n"
                          << "  <http_port>" << port_ << "</http_port>\n"
                          << "  <listen_host>127.0.0.1</listen_host>\n"
                          << "  <path>" << dir_ << "/data/</path>\n"
                          << "  <tmp_path>" << dir_ << "/tmp/</tmp_path>\n"
                          << "  <user_files_path>" << dir_ << "/user_files/</user_files_path>\n"
                          << "  <format_schema_path>" << dir_ << "/schemas/</format_schema_path>\n"
                          << "  <users_config>users.xml</users_config>\n"
                          << "  <default_profile>default</default_profile>\n"
                          << "  <default_database>default</default_database>\n"
                          << "  <mark_cache_size>5368709</mark_cache_size>\n</yandex>\n";
    std::ofstream(dir_ + "/users.xml")
        << "<?xml version=\"1.0\"?>\n<yandex>\n  <profiles><default></default></profiles>\n"
        << "  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>"
        << "<profile>default</profile><quota>default</quota></default></users>\n"
        << "  <quotas><default></default></quotas>\n</yandex>\n";
    const std::string log = dir_ + "/server.log";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::string arg0 = kBinary, arg1 = "--config-file=" + config;
    char* argv[] = {arg0.data(), arg1.data(), nullptr};
    if (posix_spawn(&pid_, kBinary, &actions, nullptr, argv, environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    if (pid_ < 0) {
      error_ = "cannot start clickhouse-server";
      return;
    }
    // Ready when it answers a query (startup takes about a second).
    ClickHouseClient client({"127.0.0.1", port_, "default"});
    for (int i = 0; i < 300; ++i) {
      std::string out;
      if (client.query("SELECT 1", &out, false).empty()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::ifstream in(log);
    error_ = "clickhouse-server did not answer on port " + std::to_string(port_) + ": " +
             std::string(std::istreambuf_iterator<char>(in), {});
  }

  ~ClickHouseServer() {
    stop();
    std::filesystem::remove_all(dir_);
  }
  // Stops the server. SIGKILL for tests of a server that goes away (a
  // clean SIGTERM waits for clients' open keep-alive connections).
  void stop(int sig = SIGTERM) {
    if (pid_ > 0) {
      ::kill(pid_, sig);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  ClickHouseServer(const ClickHouseServer&) = delete;
  ClickHouseServer& operator=(const ClickHouseServer&) = delete;

  // "" when the server is up, else why not.
  const std::string& error() const { return error_; }
  std::string url(const std::string& database) const {
    return "clickhouse://127.0.0.1:" + std::to_string(port_) + "/" + database;
  }

 private:
  static int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
  }

  std::string dir_;
  std::string error_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace sonde::store::test
