// A throwaway PostgreSQL server for tests: initdb into a temporary folder, pg_ctl start on a free
// loopback port (found by binding port 0) with its unix socket in that folder; pg_ctl stop and the
// folder removed at the end. As root, the server runs as the `postgres` OS user (PostgreSQL refuses
// to run as root) and the folder is handed to it. The binaries come from
// /usr/lib/postgresql/<version>/bin (Debian's `postgresql` package, which scripts/install-deps.sh
// installs); without them Start fails with a message saying so, so that tests fail rather than skip.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace kbench::server::testing {

class PostgresServer {
 public:
  // durable_commits: a commit returns once its WAL is written (synchronous_commit=on), so that a
  // killed server loses no committed transaction; the default leaves the WAL to a background writer
  // (faster; a kill loses the last commits). fsync stays off: only an OS crash would need it.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(bool durable_commits = false);
  ~PostgresServer();  // Stops the server and removes its folder.
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  // "postgresql://kbench@127.0.0.1:<port>/<dbname>" (trust authentication on loopback).
  std::string Uri(const std::string& dbname) const;
  // Creates an empty database with a fresh name and returns its URI.
  absl::StatusOr<std::string> CreateDatabase();

  // Chaos tests: kills the server as a crash would (SIGKILL to the postmaster and every backend) and
  // waits until they are gone; Restart starts it again on the same data and port (crash recovery).
  absl::Status Kill();
  absl::Status Restart();

 private:
  PostgresServer(std::string dir, std::string bin_dir) : dir_(std::move(dir)), bin_dir_(std::move(bin_dir)) {}

  // pg_ctl start on port (the socket in dir_).
  absl::Status StartOn(int port);

  std::string dir_;      // Holds data/, the socket and server.log.
  std::string bin_dir_;  // initdb, pg_ctl.
  int port_ = 0;
  bool running_ = false;
  int databases_ = 0;
  bool durable_commits_ = false;
};

// The server shared by the tests of this process: started at first use, stopped when the tests end.
// Every call after a failed start returns the same error.
absl::StatusOr<PostgresServer*> SharedPostgres();

}  // namespace kbench::server::testing
