// The throwaway PostgreSQL server: finding the binaries, running them as the right user, the port.
#include "postgres_fixture.h"

#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <libpq-fe.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace kbench::server::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kSuperuser[] = "kbench";
constexpr int kStartAttempts = 3;  // A free port can be taken by someone else before the server binds it.

// The newest /usr/lib/postgresql/<version>/bin that has initdb and pg_ctl.
absl::StatusOr<std::string> FindBinDir() {
  const fs::path root = "/usr/lib/postgresql";
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const fs::path bin = entry.path() / "bin";
    if (fs::exists(bin / "initdb") && fs::exists(bin / "pg_ctl"))
      found.emplace_back(std::atoi(entry.path().filename().c_str()), bin.string());
  }
  if (found.empty())
    return absl::FailedPreconditionError(
        "PostgreSQL server binaries not found (no /usr/lib/postgresql/*/bin/initdb): install Debian's "
        "'postgresql' package (scripts/install-deps.sh does); the PostgreSQL store tests cannot run without it");
  std::sort(found.begin(), found.end());
  return found.back().second;
}

// A TCP port on 127.0.0.1 that was free a moment ago.
absl::StatusOr<int> FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  if (port == 0) return absl::InternalError("cannot bind 127.0.0.1:0");
  return port;
}

// The user the server runs as: postgres when we are root, else ourselves (nullopt).
struct RunAs {
  uid_t uid;
  gid_t gid;
};

absl::StatusOr<std::optional<RunAs>> ServerUser() {
  if (geteuid() != 0) return std::optional<RunAs>();
  const passwd* pw = getpwnam("postgres");
  if (pw == nullptr)
    return absl::FailedPreconditionError(
        "running as root, and there is no 'postgres' OS user to run the PostgreSQL server as (Debian's "
        "postgresql package creates it)");
  return std::optional<RunAs>(RunAs{pw->pw_uid, pw->pw_gid});
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs argv to completion as user (when set), output to log_path. Error with the log's tail unless
// it exits 0.
absl::Status Run(const std::vector<std::string>& argv, const std::optional<RunAs>& user, const std::string& log_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int null = open("/dev/null", O_RDONLY);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    if (null >= 0) dup2(null, STDIN_FILENO);
    if (user.has_value()) {
      if (setgroups(0, nullptr) != 0 || setgid(user->gid) != 0 || setuid(user->uid) != 0) _exit(126);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  std::string log = ReadFile(log_path);
  if (log.size() > 2000) log = log.substr(log.size() - 2000);
  return absl::InternalError(absl::StrCat(argv[0], " failed (status ", status, "):\n", log));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(bool durable_commits) {
  absl::StatusOr<std::string> bin = FindBinDir();
  if (!bin.ok()) return bin.status();
  absl::StatusOr<std::optional<RunAs>> user = ServerUser();
  if (!user.ok()) return user.status();
  std::string templ = (fs::temp_directory_path() / "kbench-pg-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) return absl::InternalError(absl::StrCat("mkdtemp ", templ, " failed"));
  std::unique_ptr<PostgresServer> server(new PostgresServer(templ, *bin));
  server->durable_commits_ = durable_commits;
  if (user->has_value() && chown(templ.c_str(), (*user)->uid, (*user)->gid) != 0)
    return absl::InternalError(absl::StrCat("cannot hand ", templ, " to the postgres user"));
  const std::string data = templ + "/data";
  if (absl::Status s = Run({*bin + "/initdb", "-D", data, "-U", kSuperuser, "-A", "trust", "-E", "UTF8",
                            "--locale=C", "--no-sync", "--no-instructions"},
                           *user, templ + "/initdb.log");
      !s.ok())
    return s;
  absl::Status started = absl::InternalError("not started");
  for (int attempt = 0; attempt < kStartAttempts && !started.ok(); ++attempt) {
    absl::StatusOr<int> port = FreePort();
    if (!port.ok()) return port.status();
    started = server->StartOn(*port);
  }
  if (!started.ok()) return started;
  return server;
}

absl::Status PostgresServer::StartOn(int port) {
  absl::StatusOr<std::optional<RunAs>> user = ServerUser();
  if (!user.ok()) return user.status();
  const std::string log = dir_ + "/server.log";
  // A throwaway server: durability settings off, for speed; with durable_commits a commit's WAL is
  // written before it returns, which is all a killed server (not a crashed OS) needs.
  const std::string options = absl::StrCat("-c listen_addresses=127.0.0.1 -p ", port, " -k ", dir_,
                                           " -c fsync=off -c full_page_writes=off -c synchronous_commit=",
                                           durable_commits_ ? "on" : "off", " -c max_connections=200");
  absl::Status s = Run({bin_dir_ + "/pg_ctl", "-D", dir_ + "/data", "-l", log, "-w", "-t", "60", "-o", options,
                        "start"},
                       *user, dir_ + "/pg_ctl.log");
  if (!s.ok()) return absl::InternalError(absl::StrCat(s.message(), "\nserver log:\n", ReadFile(log)));
  port_ = port;
  running_ = true;
  return absl::OkStatus();
}

absl::Status PostgresServer::Kill() {
  if (!running_) return absl::FailedPreconditionError("the test PostgreSQL server is not running");
  // The postmaster's pid is the first line of postmaster.pid; its backends are its children.
  std::istringstream pid_file(ReadFile(dir_ + "/data/postmaster.pid"));
  pid_t postmaster = 0;
  if (!(pid_file >> postmaster) || postmaster <= 0)
    return absl::InternalError("no pid in the test server's postmaster.pid");
  std::vector<pid_t> pids = {postmaster};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const pid_t pid = std::atoi(entry.path().filename().c_str());
    if (pid <= 0) continue;
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after the last ')'.
    const std::string stat = ReadFile(entry.path() / "stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == postmaster) pids.push_back(pid);
  }
  for (pid_t pid : pids) kill(pid, SIGKILL);
  running_ = false;
  // Not our children (pg_ctl daemonized them): wait until each is gone, so the restart finds the
  // shared memory and the port free.
  for (int i = 0; i < 6000; ++i) {
    bool alive = false;
    for (pid_t pid : pids) alive = alive || kill(pid, 0) == 0;
    if (!alive) return absl::OkStatus();
    usleep(10'000);
  }
  return absl::DeadlineExceededError("the killed test PostgreSQL server did not go away within 60 s");
}

absl::Status PostgresServer::Restart() {
  if (running_) return absl::FailedPreconditionError("the test PostgreSQL server is running");
  return StartOn(port_);
}

PostgresServer::~PostgresServer() {
  if (running_) {
    absl::StatusOr<std::optional<RunAs>> user = ServerUser();
    if (user.ok()) {
      absl::Status s = Run({bin_dir_ + "/pg_ctl", "-D", dir_ + "/data", "-m", "immediate", "-w", "stop"}, *user,
                           dir_ + "/pg_ctl.log");
      if (!s.ok()) ADD_FAILURE() << "stopping the test PostgreSQL server: " << s;
    }
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PostgresServer::Uri(const std::string& dbname) const {
  return absl::StrCat("postgresql://", kSuperuser, "@127.0.0.1:", port_, "/", dbname);
}

absl::StatusOr<std::string> PostgresServer::CreateDatabase() {
  const std::string name = absl::StrCat("kbench_test_", ++databases_);
  PGconn* conn = PQconnectdb(Uri("postgres").c_str());
  absl::Status status;
  if (PQstatus(conn) != CONNECTION_OK) {
    status = absl::UnavailableError(absl::StrCat("cannot connect to the test server: ", PQerrorMessage(conn)));
  } else {
    PGresult* r = PQexec(conn, absl::StrCat("CREATE DATABASE ", name).c_str());
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
      status = absl::InternalError(absl::StrCat("CREATE DATABASE ", name, ": ", PQresultErrorMessage(r)));
    PQclear(r);
  }
  PQfinish(conn);
  if (!status.ok()) return status;
  return Uri(name);
}

namespace {

// Owns the shared server; gtest tears it down after the last test.
class SharedPostgresEnvironment : public ::testing::Environment {
 public:
  absl::StatusOr<PostgresServer*> Get() {
    if (!server_.ok()) return server_.status();
    if (*server_ == nullptr) {
      absl::StatusOr<std::unique_ptr<PostgresServer>> s = PostgresServer::Start();
      if (!s.ok()) {
        server_ = s.status();
        return server_.status();
      }
      server_ = *std::move(s);
    }
    return server_->get();
  }
  void TearDown() override {
    if (server_.ok()) server_->reset();
  }

 private:
  absl::StatusOr<std::unique_ptr<PostgresServer>> server_ = std::unique_ptr<PostgresServer>();
};

SharedPostgresEnvironment* const kEnvironment = [] {
  auto* env = new SharedPostgresEnvironment;
  ::testing::AddGlobalTestEnvironment(env);  // gtest owns it.
  return env;
}();

}  // namespace

absl::StatusOr<PostgresServer*> SharedPostgres() { return kEnvironment->Get(); }

}  // namespace kbench::server::testing
