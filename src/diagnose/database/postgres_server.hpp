// A throw-away PostgreSQL cluster on 127.0.0.1 for a diagnosis run (config
// key "database": {"start": true}, `sonde demo --database postgresql`):
// initdb into a directory, started with pg_ctl on a free loopback port
// without fsync (nothing in it must survive), stopped by the destructor.
// PostgreSQL refuses to run as root, so as root it runs as the "postgres"
// user (Debian's postgresql package creates it).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sonde::diagnose::database {

struct DatabaseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class PostgresServer {
 public:
  // Creates the cluster in a fresh directory under the temporary directory
  // (readable by the server's user, unlike e.g. a home directory) and
  // starts it. Throws DatabaseError saying why it cannot (no server
  // binaries, initdb or start failed: the message names the log to read,
  // which is then kept).
  // `cpus` not empty: the server runs on those CPUs only (taskset), like a
  // database on a machine of its own.
  static std::unique_ptr<PostgresServer> start(const std::vector<int>& cpus = {});
  ~PostgresServer();  // immediate stop, then the directory is removed
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // libpq connection string of the superuser "sonde" to `dbname`.
  std::string conninfo(const std::string& dbname = "postgres") const;
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  // The postmaster's pid (its backends are its children), from
  // postmaster.pid; -1 when the file cannot be read.
  int pid() const;

 private:
  PostgresServer(std::string dir, std::string bin) : dir_(std::move(dir)), bin_(std::move(bin)) {}
  std::string as_server_user() const;
  void stop_immediately() const;  // pg_ctl stop -m immediate; harmless if not running
  std::string dir_, bin_;
  int port_ = -1;
  bool started_ = false;
  bool keep_dir_ = false;  // a failed start keeps its logs for the message
};

}  // namespace sonde::diagnose::database
