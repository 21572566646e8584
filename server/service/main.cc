// kbench-coordinator: parses flags, opens the store, serves the Coordinator gRPC service and the
// Prometheus metrics, runs the lease reaper, and shuts down cleanly on SIGTERM or SIGINT. The store
// is SQLite (a file) by default, PostgreSQL when --db is a postgresql:// URI.
// On start it prints exactly two lines to stdout (tests read the bound ports from them):
//   kbench-coordinator listening on <host>:<port>   (or the unix:PATH it was given)
//   kbench-coordinator metrics on <host>:<port>
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <pthread.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/channel.h"
#include "api/parse_errors.h"
#include "api/stats/verdict.h"
#include "grpcpp/grpcpp.h"
#include "server/auth/security_flags.h"
#include "server/auth/server_security.h"
#include "server/service/cli_args.h"
#include "server/coordinator/clock.h"
#include "server/coordinator/coordinator.h"
#include "server/service/coordinator_service.h"
#include "server/service/metrics.h"
#include "server/service/process_tuning.h"
#include "server/service/reaper.h"
#include "server/service/request_gate.h"
#include "server/store/postgres_store.h"
#include "server/store/sqlite_store.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "gRPC address host:port to serve on; port 0 picks a free port");
ABSL_FLAG(std::string, db, "./kbench.db",
          "SQLite database file, created when missing; or a PostgreSQL URI (postgresql://user@host:port/dbname) "
          "for a fleet, where several coordinators share one database");
ABSL_FLAG(int32_t, db_pool_size, 4, "PostgreSQL connections this coordinator keeps open");
ABSL_FLAG(std::string, plugin_dir, "",
          "Directory of uploaded kernel plugins (content-addressed); default: DB.plugins beside a SQLite "
          "database, ./kbench-plugins with PostgreSQL (replicas must share it)");
ABSL_FLAG(int64_t, max_plugin_bytes, int64_t{256} << 20, "Largest kernel plugin UploadPlugin accepts, in bytes");
ABSL_FLAG(std::string, sqlite_synchronous, "full",
          "SQLite commits: 'full' fsyncs every commit (nothing lost even to a power loss); 'normal' fsyncs at "
          "checkpoints only (nothing lost to a coordinator crash or restart; the last commits may be lost to an "
          "OS crash or power loss), for several times the write throughput on a slow disk");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:0",
          "Prometheus /metrics address host:port; port 0 picks a free port; empty disables metrics");
ABSL_FLAG(int64_t, lease_ttl_ms, 30000, "A job lease expires this long after the worker's last report");
ABSL_FLAG(int32_t, max_attempts, 3, "Leases a job may be granted before an expired lease fails it");
ABSL_FLAG(int64_t, worker_lost_after_ms, 15000, "A worker without a heartbeat for this long is shown as lost");
ABSL_FLAG(int64_t, heartbeat_interval_ms, 2000, "How often workers are told to heartbeat");
ABSL_FLAG(double, regression_threshold, kbench::api::VerdictRule{}.threshold,
          "A result slower than its baseline by more than this fraction (and significantly) is SLOWER; SAME needs "
          "the change's interval within it (server/README.md, Verdicts)");
ABSL_FLAG(double, regression_alpha, kbench::api::VerdictRule{}.alpha,
          "Two-sided significance level of a run's median against the baseline's run medians");
ABSL_FLAG(int32_t, baseline_results, kbench::server::RegressionConfig{}.baseline_results,
          "Latest OK main-branch results of a series whose run medians form its baseline");
ABSL_FLAG(bool, confirm_regressions, true,
          "Confirm a SLOWER by one automatic re-run before the series gauge (and its alert) reads it");
ABSL_FLAG(std::string, baseline_branch, "main", "Value of the job label 'branch' whose history is the baseline");
ABSL_FLAG(int64_t, baseline_cache_mb, 64,
          "Memory for series baselines kept between verdicts, in MiB (the database still decides which results "
          "form each baseline, so replicas never judge on a stale one); 0: none");
ABSL_FLAG(int32_t, rpc_threads, kbench::server::CoordinatorService::kDefaultHandlerThreads,
          "Threads that run the rpcs' work (store calls); gRPC's own threads only move bytes");
ABSL_FLAG(double, health_margin, 0.10,
          "A worker is unhealthy when a device's calibrated copy bandwidth or f32/bf16 peak is below its GPU "
          "model's fleet median by more than this fraction");

namespace kbench::server {
namespace {

constexpr char kProgram[] = "kbench-coordinator";
constexpr std::chrono::milliseconds kReapPeriod{1000};
constexpr std::chrono::seconds kShutdownGrace{5};

// The flags --help lists, in order.
const std::vector<std::string>& OwnFlags() {
  static const auto* names = new std::vector<std::string>{
      "listen", "db", "db_pool_size", "sqlite_synchronous", "metrics_listen", "lease_ttl_ms", "max_attempts",
      "worker_lost_after_ms", "heartbeat_interval_ms", "regression_threshold", "regression_alpha",
      "baseline_results", "confirm_regressions", "baseline_branch", "baseline_cache_mb", "health_margin", "plugin_dir", "max_plugin_bytes",
      "rpc_threads"};
  return *names;
}

struct ServerOptions {
  std::string listen;
  std::string db;
  int db_pool_size = 4;
  bool sqlite_fsync_each_commit = true;
  std::string metrics_listen;
  std::string plugin_dir;
  int64_t max_plugin_bytes = 0;
  int rpc_threads = CoordinatorService::kDefaultHandlerThreads;
  CoordinatorConfig coordinator;
};

absl::Status Check(bool ok, absl::string_view message) {
  return ok ? absl::OkStatus() : absl::InvalidArgumentError(message);
}

// Flag values -> options; a message naming the flag when one is out of range.
absl::StatusOr<ServerOptions> OptionsFromFlags() {
  ServerOptions o;
  o.listen = absl::GetFlag(FLAGS_listen);
  o.db = absl::GetFlag(FLAGS_db);
  o.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  o.plugin_dir = absl::GetFlag(FLAGS_plugin_dir);
  if (o.plugin_dir.empty()) o.plugin_dir = IsPostgresUri(o.db) ? "./kbench-plugins" : o.db + ".plugins";
  o.max_plugin_bytes = absl::GetFlag(FLAGS_max_plugin_bytes);
  o.coordinator.lease_ttl = std::chrono::milliseconds(absl::GetFlag(FLAGS_lease_ttl_ms));
  o.coordinator.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  o.coordinator.worker_lost_after = std::chrono::milliseconds(absl::GetFlag(FLAGS_worker_lost_after_ms));
  o.coordinator.heartbeat_interval = std::chrono::milliseconds(absl::GetFlag(FLAGS_heartbeat_interval_ms));
  o.db_pool_size = absl::GetFlag(FLAGS_db_pool_size);
  o.rpc_threads = absl::GetFlag(FLAGS_rpc_threads);
  const std::string synchronous = absl::GetFlag(FLAGS_sqlite_synchronous);
  o.sqlite_fsync_each_commit = synchronous == "full";
  o.coordinator.regression.threshold = absl::GetFlag(FLAGS_regression_threshold);
  o.coordinator.regression.alpha = absl::GetFlag(FLAGS_regression_alpha);
  o.coordinator.regression.baseline_results = absl::GetFlag(FLAGS_baseline_results);
  o.coordinator.confirm_regressions = absl::GetFlag(FLAGS_confirm_regressions);
  o.coordinator.baseline_branch = absl::GetFlag(FLAGS_baseline_branch);
  const int64_t baseline_cache_mb = absl::GetFlag(FLAGS_baseline_cache_mb);
  o.coordinator.baseline_cache_bytes = static_cast<size_t>(std::max<int64_t>(0, baseline_cache_mb)) << 20;
  o.coordinator.health_margin = absl::GetFlag(FLAGS_health_margin);
  for (absl::Status s : {
           Check(o.listen.find(':') != std::string::npos, "--listen: expected host:port"),
           Check(o.metrics_listen.empty() || o.metrics_listen.find(':') != std::string::npos,
                 "--metrics-listen: expected host:port, or empty to disable"),
           Check(!o.db.empty(), "--db: required"),
           Check(o.coordinator.lease_ttl.count() > 0, "--lease-ttl-ms: must be > 0"),
           Check(o.coordinator.max_attempts >= 1, "--max-attempts: must be >= 1"),
           Check(o.coordinator.worker_lost_after.count() > 0, "--worker-lost-after-ms: must be > 0"),
           Check(o.coordinator.heartbeat_interval.count() > 0, "--heartbeat-interval-ms: must be > 0"),
           Check(o.db_pool_size >= 1, "--db-pool-size: must be >= 1"),
           Check(o.rpc_threads >= 1 && o.rpc_threads <= 256, "--rpc-threads: must be in [1, 256]"),
           Check(synchronous == "full" || synchronous == "normal", "--sqlite-synchronous: 'full' or 'normal'"),
           Check(o.coordinator.regression.threshold >= 0, "--regression-threshold: must be >= 0"),
           Check(o.coordinator.regression.alpha > 0 && o.coordinator.regression.alpha < 1,
                 "--regression-alpha: must be in (0, 1)"),
           Check(o.coordinator.regression.baseline_results >= 1, "--baseline-results: must be >= 1"),
           Check(!o.coordinator.baseline_branch.empty(), "--baseline-branch: required"),
           Check(baseline_cache_mb >= 0 && baseline_cache_mb <= (int64_t{1} << 20),
                 "--baseline-cache-mb: must be in [0, 1048576]"),
           Check(o.max_plugin_bytes > 0, "--max-plugin-bytes: must be > 0"),
           Check(o.coordinator.health_margin >= 0 && o.coordinator.health_margin < 1,
                 "--health-margin: must be in [0, 1)"),
       }) {
    if (!s.ok()) return s;
  }
  return o;
}

std::string HostOf(const std::string& address) { return address.substr(0, address.rfind(':')); }

// The database for messages: a PostgreSQL URI without its password.
std::string Redacted(const std::string& db) {
  if (!IsPostgresUri(db)) return db;
  const size_t scheme = db.find("://") + 3;
  const size_t at = db.find('@', scheme);
  const size_t colon = db.find(':', scheme);
  if (at == std::string::npos || colon == std::string::npos || colon > at) return db;
  return db.substr(0, colon + 1) + "***" + db.substr(at);
}

absl::StatusOr<std::unique_ptr<Store>> OpenStore(const ServerOptions& options) {
  if (IsPostgresUri(options.db)) {
    absl::StatusOr<std::unique_ptr<PostgresStore>> pg = PostgresStore::Open(options.db, options.db_pool_size);
    if (!pg.ok()) return pg.status();
    return std::unique_ptr<Store>(*std::move(pg));
  }
  absl::StatusOr<std::unique_ptr<SqliteStore>> sqlite = SqliteStore::Open(options.db, options.sqlite_fsync_each_commit);
  if (!sqlite.ok()) return sqlite.status();
  return std::unique_ptr<Store>(*std::move(sqlite));
}

int Serve(const ServerOptions& options, auth::ServerSecurity& security, const sigset_t& stop_signals) {
  absl::StatusOr<std::unique_ptr<Store>> store = OpenStore(options);
  if (!store.ok()) {
    std::cerr << kProgram << ": cannot open database " << Redacted(options.db) << ": " << store.status().message()
              << "\n";
    return 1;
  }
  SystemClock clock;
  Metrics metrics;
  Coordinator coordinator(options.coordinator, store->get(), &clock, &metrics);
  absl::StatusOr<std::unique_ptr<PluginStore>> plugins = PluginStore::Open(options.plugin_dir, options.max_plugin_bytes);
  if (!plugins.ok()) {
    std::cerr << kProgram << ": --plugin-dir: " << plugins.status().message() << "\n";
    return 1;
  }
  coordinator.set_plugin_store(plugins->get());

  std::unique_ptr<MetricsServer> metrics_server;
  if (!options.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsServer>> m = MetricsServer::Start(options.metrics_listen, metrics.registry());
    if (!m.ok()) {
      std::cerr << kProgram << ": " << m.status().message() << "\n";
      return 1;
    }
    metrics_server = *std::move(m);
  }

  RequestGate gate;
  CoordinatorService service(&coordinator, &gate, options.rpc_threads);
  service.set_plugin_store(plugins->get());
  service.set_caller_name([&security](const grpc::ServerContextBase& c) { return security.CallerName(c); });
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen, security.credentials(), &port);
  builder.SetMaxReceiveMessageSize(api::kMaxMessageBytes);
  builder.SetMaxSendMessageSize(api::kMaxMessageBytes);
  builder.RegisterService(security.Guard(&service));
  // A request that does not parse (a string that is not UTF-8) is answered INVALID_ARGUMENT with the
  // field, not INTERNAL with an empty message.
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(api::MakeParseErrorInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::cerr << kProgram << ": cannot listen on " << options.listen << "\n";
    return 1;
  }

  Reaper reaper(
      [&coordinator, &metrics, &service] {
        if (auto r = coordinator.RequeueExpired(); !r.ok())
          std::cerr << kProgram << ": requeue: " << r.status().message() << "\n";
        if (absl::Status s = coordinator.PublishSnapshot(); !s.ok())
          std::cerr << kProgram << ": metrics snapshot: " << s.message() << "\n";
        metrics.SetLeaseCallsWaiting(static_cast<int64_t>(service.parked_leases()));
      },
      kReapPeriod);
  reaper.Start();

  // A unix socket has no port to report: its address is the one it was given.
  const bool unix_socket = absl::StartsWith(options.listen, "unix:");
  std::cout << kProgram << " listening on "
            << (unix_socket ? options.listen : HostOf(options.listen) + ":" + std::to_string(port)) << "\n";
  if (metrics_server != nullptr)
    std::cout << kProgram << " metrics on " << HostOf(options.metrics_listen) << ":" << metrics_server->port() << "\n";
  std::cout.flush();

  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::cerr << kProgram << ": signal " << signal << ", shutting down\n";
  // Let the requests in progress finish, then stop at once: nothing is left to wait for, and gRPC
  // would otherwise hold on to idle client connections until the deadline. Workers' long polls are
  // answered first (they would hold the drain for their wait).
  service.StopWaiting();
  if (!gate.CloseAndDrain(absl::FromChrono(kShutdownGrace)))
    std::cerr << kProgram << ": requests still running after " << kShutdownGrace.count() << " s; cancelling them\n";
  server->Shutdown(std::chrono::system_clock::now());
  server->Wait();
  reaper.Stop();
  metrics_server.reset();
  // The store closes when it goes out of scope, after everything that uses it has stopped.
  return 0;
}

}  // namespace
}  // namespace kbench::server

int main(int argc, char** argv) {
  using namespace kbench::server;
  TuneProcess();  // Mutex settings (process_tuning.h).
  std::vector<std::string> args = NormalizeFlagNames(argc, argv);
  if (WantsHelp(args)) {
    std::cout << Usage(kProgram, "Coordinator of kbench: job queue, store, Prometheus metrics.",
                       auth::WithSecurityFlags(OwnFlags()));
    return 0;
  }
  if (absl::Status s = CheckArgs(args); !s.ok()) {
    std::cerr << kProgram << ": " << s.message() << " (see --help)\n";
    return 2;
  }
  std::vector<char*> normalized;
  for (std::string& a : args) normalized.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(normalized.size()), normalized.data());
  absl::StatusOr<ServerOptions> options = OptionsFromFlags();
  if (!options.ok()) {
    std::cerr << kProgram << ": " << options.status().message() << " (see --help)\n";
    return 2;
  }
  // TLS, tokens, rate limits; refuses to listen beyond loopback without tokens unless --insecure.
  absl::StatusOr<std::unique_ptr<auth::ServerSecurity>> security =
      auth::ServerSecurity::Make(auth::SecurityOptionsFromFlags(), options->listen);
  if (!security.ok()) {
    std::cerr << kProgram << ": " << security.status().message() << " (see --help)\n";
    return 2;
  }
  if (!(*security)->warning().empty()) std::cerr << kProgram << ": " << (*security)->warning() << "\n";
  std::cerr << kProgram << ": " << (*security)->Describe() << "\n";
  // Block the stop signals in every thread (gRPC's and the exposer's inherit the mask); the main
  // thread takes them synchronously with sigwait and shuts down in order.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return Serve(*options, **security, stop_signals);
}
