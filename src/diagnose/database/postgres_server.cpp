#include "diagnose/database/postgres_server.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "diagnose/engine/cpu_list.hpp"
#include "diagnose/engine/sut.hpp"

namespace sonde::diagnose::database {
namespace {

namespace fs = std::filesystem;

std::string command_output(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), p) != nullptr) out += buffer.data();
  ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The server binaries: pg_config's answer, else Debian's versioned directory.
std::string find_bin() {
  std::string bin = command_output("pg_config --bindir 2>/dev/null");
  if (!bin.empty() && fs::exists(fs::path(bin) / "initdb")) return bin;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec))
    if (fs::exists(entry.path() / "bin" / "initdb")) return (entry.path() / "bin").string();
  return "";
}

}  // namespace

std::string PostgresServer::as_server_user() const {
  return ::geteuid() == 0 ? "runuser -u postgres -- " : "";
}

std::unique_ptr<PostgresServer> PostgresServer::start(const std::vector<int>& cpus) {
  const std::string bin = find_bin();
  if (bin.empty() || !fs::exists(fs::path(bin) / "pg_ctl"))
    throw DatabaseError(
        "PostgreSQL server binaries (initdb, pg_ctl) not found; install Debian's postgresql "
        "package (bash scripts/install-deps.sh)");
  std::error_code tmp_error;
  const fs::path tmp = fs::temp_directory_path(tmp_error);
  if (tmp_error)
    throw DatabaseError("no directory for temporary files (TMPDIR): " + tmp_error.message());
  std::string dir = (tmp / "sonde-postgres-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr)
    throw DatabaseError("cannot create a directory for PostgreSQL in " + tmp.string() + ": " +
                        std::strerror(errno));
  std::unique_ptr<PostgresServer> server(new PostgresServer(dir, bin));
  const std::string& d = server->dir_;
  if (::geteuid() == 0) {
    if (command_output("id -u postgres 2>/dev/null").empty())
      throw DatabaseError("running as root, and there is no 'postgres' user to run PostgreSQL");
    std::system(("chown -R postgres " + quoted(d)).c_str());
  }
  server->port_ = engine::free_loopback_port();
  // initdb's output goes where this (maybe root) shell redirects it, the
  // server's log is written by the server's user: two files.
  const std::string init_log = d + "/initdb.log", log = d + "/server.log";
  const std::string init = server->as_server_user() + quoted(bin + "/initdb") + " -D " +
                           quoted(d + "/data") + " -U sonde --auth=trust --no-sync -E UTF8 >" +
                           quoted(init_log) + " 2>&1";
  if (std::system(init.c_str()) != 0) {
    server->keep_dir_ = true;  // for the log the message points to
    throw DatabaseError("PostgreSQL initdb failed, see " + init_log);
  }
  // TCP on loopback only, no Unix socket (Debian's /var/run/postgresql
  // may be missing or someone else's, and socket paths are length-limited).
  const std::string options = "-c unix_socket_directories='' -p " + std::to_string(server->port_) +
                              " -c listen_addresses=127.0.0.1 -c max_connections=200 -F";
  if (!cpus.empty() && command_output("command -v taskset").empty())
    throw DatabaseError("pinning the server to CPUs needs taskset (Debian package util-linux)");
  const std::string pin = cpus.empty() ? "" : "taskset -c " + engine::cpu_list_text(cpus) + " ";
  const std::string start = server->as_server_user() + pin + quoted(bin + "/pg_ctl") + " -D " +
                            quoted(d + "/data") + " -w -t 60 -l " + quoted(log) + " -o " +
                            quoted(options) + " start >/dev/null 2>&1";
  if (std::system(start.c_str()) != 0) {
    server->stop_immediately();  // pg_ctl may have stopped waiting on a server still starting
    server->keep_dir_ = true;
    throw DatabaseError("the PostgreSQL server did not start, see " + log);
  }
  server->started_ = true;
  return server;
}

void PostgresServer::stop_immediately() const {
  const std::string stop = as_server_user() + quoted(bin_ + "/pg_ctl") + " -D " +
                           quoted(dir_ + "/data") + " -m immediate stop >/dev/null 2>&1";
  [[maybe_unused]] int rc = std::system(stop.c_str());
}

PostgresServer::~PostgresServer() {
  if (started_) stop_immediately();
  std::error_code ec;
  if (!keep_dir_) fs::remove_all(dir_, ec);
}

std::string PostgresServer::conninfo(const std::string& dbname) const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " user=sonde dbname=" + dbname;
}

int PostgresServer::pid() const {
  // The first line of postmaster.pid is the postmaster's pid.
  std::ifstream in(dir_ + "/data/postmaster.pid");
  int pid = -1;
  if (!(in >> pid) || pid <= 0) return -1;
  return pid;
}

}  // namespace sonde::diagnose::database
