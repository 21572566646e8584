// kbench-load: drives a kbench-coordinator on loopback with N simulated workers and M simulated
// clients for a fixed time, then reports each call's rate and p50/p99 latency, the coordinator's RSS
// and CPU, and whether every submitted job finished exactly once with all its results.
// It starts the coordinator itself (a fresh SQLite file, or --db postgresql://...) unless --coordinator
// names a running one. Exit status: 0 when correct (no job lost or duplicated, every call OK), 1 when
// not, 2 for bad flags. Latency is reported, never judged: the exit status does not depend on speed.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/bench/coordinator_process.h"
#include "server/bench/load_config.h"
#include "server/bench/load_run.h"
#include "server/service/cli_args.h"
#include "server/service/process_tuning.h"

ABSL_FLAG(int32_t, workers, 1000, "Simulated workers");
ABSL_FLAG(int32_t, clients, 100, "Simulated clients, each with one job in flight at a time");
ABSL_FLAG(double, duration_s, 60, "Seconds the clients submit for (the measured window)");
ABSL_FLAG(double, drain_timeout_s, 180, "Longest wait, after the window, for the last submitted jobs to finish");
ABSL_FLAG(std::string, coordinator, "",
          "host:port of a running coordinator on loopback to drive; empty: start one (--coordinator-bin, --db)");
ABSL_FLAG(int32_t, coordinator_pid, 0, "With --coordinator: its pid, to report its RSS and CPU");
ABSL_FLAG(std::string, coordinator_bin, "",
          "kbench-coordinator to start; default: the one beside this binary");
ABSL_FLAG(std::string, db, "",
          "The started coordinator's --db: a SQLite file or a postgresql:// URI (an empty database); default: a "
          "fresh SQLite file in a temporary folder, removed at the end");
ABSL_FLAG(std::vector<std::string>, coordinator_args, {},
          "More flags for the started coordinator, comma-separated (e.g. --sqlite-synchronous=normal)");
ABSL_FLAG(std::string, worker_token, "", "Bearer token of the simulated workers (worker role), when tokens are on");
ABSL_FLAG(std::string, client_token, "", "Bearer token of the simulated clients (submit role), when tokens are on");
ABSL_FLAG(int32_t, channels, 0, "gRPC connections shared by the simulated fleet; 0: one per worker and client");
ABSL_FLAG(int64_t, lease_wait_ms, 10'000,
          "A worker's long poll (LeaseJobRequest.wait_ms, as kbench-worker's --lease-wait-ms); 0: poll with backoff");
ABSL_FLAG(int64_t, result_ms, 100, "Simulated measuring time of one result");
ABSL_FLAG(int64_t, poll_ms, 200, "A client's GetJob period while its job runs (kbench-client's)");
ABSL_FLAG(int32_t, list_every, 5, "Every this many polls a client also lists jobs; 0: never");
ABSL_FLAG(int64_t, think_ms, 0, "A client's pause between reading a job's results and its next submission");
ABSL_FLAG(int64_t, client_start_spread_ms, 1'000,
          "Clients start at seeded offsets spread over this many ms after the window opens; 0: all at once");
ABSL_FLAG(int32_t, variants_per_job, 2, "Variants per job (one shape each): results per job");
ABSL_FLAG(int32_t, samples, 50, "Raw samples per reported result");
ABSL_FLAG(int32_t, catalog_ops, 12, "Ops in each simulated worker's catalog");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the simulated fleet (samples, phases) and of the idempotency keys");

namespace {

constexpr char kProgram[] = "kbench-load";

const std::vector<std::string>& OwnFlags() {
  static const auto* names = new std::vector<std::string>{
      "workers", "clients", "duration_s", "drain_timeout_s", "coordinator", "coordinator_pid", "coordinator_bin",
      "db", "coordinator_args", "worker_token", "client_token", "channels", "result_ms", "poll_ms", "list_every",
      "think_ms", "client_start_spread_ms", "variants_per_job", "samples", "catalog_ops", "seed"};
  return *names;
}

std::string BesideThisBinary(const std::string& name) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? name : (self.parent_path() / name).string();
}

absl::StatusOr<kbench::load::LoadConfig> ConfigFromFlags() {
  kbench::load::LoadConfig c;
  c.workers = absl::GetFlag(FLAGS_workers);
  c.clients = absl::GetFlag(FLAGS_clients);
  c.duration = std::chrono::milliseconds(static_cast<int64_t>(absl::GetFlag(FLAGS_duration_s) * 1000));
  c.drain_timeout = std::chrono::milliseconds(static_cast<int64_t>(absl::GetFlag(FLAGS_drain_timeout_s) * 1000));
  c.worker_token = absl::GetFlag(FLAGS_worker_token);
  c.client_token = absl::GetFlag(FLAGS_client_token);
  c.channels = absl::GetFlag(FLAGS_channels);
  c.result_time = std::chrono::milliseconds(absl::GetFlag(FLAGS_result_ms));
  c.lease_wait = std::chrono::milliseconds(absl::GetFlag(FLAGS_lease_wait_ms));
  c.poll_interval = std::chrono::milliseconds(absl::GetFlag(FLAGS_poll_ms));
  c.list_every = absl::GetFlag(FLAGS_list_every);
  c.think_time = std::chrono::milliseconds(absl::GetFlag(FLAGS_think_ms));
  c.client_start_spread = std::chrono::milliseconds(absl::GetFlag(FLAGS_client_start_spread_ms));
  c.variants_per_job = absl::GetFlag(FLAGS_variants_per_job);
  c.samples_per_result = absl::GetFlag(FLAGS_samples);
  c.catalog_ops = absl::GetFlag(FLAGS_catalog_ops);
  c.seed = absl::GetFlag(FLAGS_seed);
  struct Rule {
    bool ok;
    const char* message;
  };
  for (const Rule& r : {Rule{c.workers >= 1 && c.workers <= 100'000, "--workers: must be in [1, 100000]"},
                        Rule{c.clients >= 1 && c.clients <= 100'000, "--clients: must be in [1, 100000]"},
                        Rule{c.duration.count() > 0, "--duration-s: must be > 0"},
                        Rule{c.drain_timeout.count() > 0, "--drain-timeout-s: must be > 0"},
                        Rule{c.channels >= 0, "--channels: must be >= 0"},
                        Rule{c.result_time.count() >= 0, "--result-ms: must be >= 0"},
                        Rule{c.lease_wait.count() >= 0 && c.lease_wait.count() <= 30'000, "--lease-wait-ms: 0 to 30000"},
                        Rule{c.poll_interval.count() > 0, "--poll-ms: must be > 0"},
                        Rule{c.list_every >= 0, "--list-every: must be >= 0"},
                        Rule{c.think_time.count() >= 0, "--think-ms: must be >= 0"},
                        Rule{c.client_start_spread.count() >= 0 && c.client_start_spread <= c.duration,
                             "--client-start-spread-ms: 0 to the window's length"},
                        Rule{c.variants_per_job >= 1 && c.variants_per_job <= 4, "--variants-per-job: 1 to 4"},
                        Rule{c.samples_per_result >= 1 && c.samples_per_result <= 100'000, "--samples: 1 to 100000"},
                        Rule{c.catalog_ops >= 1 && c.catalog_ops <= 1000, "--catalog-ops: 1 to 1000"}})
    if (!r.ok) return absl::InvalidArgumentError(r.message);
  const std::string address = absl::GetFlag(FLAGS_coordinator);
  // Loopback only: a load generator must never be pointed at someone else's service by a typo.
  if (!address.empty() && !absl::StartsWith(address, "127.") && !absl::StartsWith(address, "localhost:") &&
      !absl::StartsWith(address, "[::1]:"))
    return absl::InvalidArgumentError("--coordinator: must be a loopback address (127.x.x.x, localhost, [::1])");
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kbench;
  // Its gRPC client threads allocate as the coordinator's do: the same settings keep the generator's
  // own CPU (which shares the machine with the coordinator) low.
  server::TuneProcess();
  std::vector<std::string> args = server::NormalizeFlagNames(argc, argv);
  if (server::WantsHelp(args)) {
    std::cout << server::Usage(kProgram,
                               "Load generator of kbench-coordinator: simulated workers and clients on loopback for "
                               "a fixed time; reports calls/s and p50/p99 latency per rpc, the coordinator's RSS, and "
                               "checks that every job finished exactly once with all its results (exit 1 if not).",
                               OwnFlags());
    return 0;
  }
  if (absl::Status s = server::CheckArgs(args); !s.ok()) {
    std::cerr << kProgram << ": " << s.message() << " (see --help)\n";
    return 2;
  }
  std::vector<char*> normalized;
  for (std::string& a : args) normalized.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(normalized.size()), normalized.data());
  absl::StatusOr<load::LoadConfig> config = ConfigFromFlags();
  if (!config.ok()) {
    std::cerr << kProgram << ": " << config.status().message() << " (see --help)\n";
    return 2;
  }

  std::unique_ptr<load::CoordinatorProcess> coordinator;
  std::string dir;
  pid_t pid = absl::GetFlag(FLAGS_coordinator_pid);
  config->address = absl::GetFlag(FLAGS_coordinator);
  if (config->address.empty()) {
    dir = (std::filesystem::temp_directory_path() / "kbench-load-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) {
      std::cerr << kProgram << ": cannot create a temporary folder\n";
      return 1;
    }
    std::string db = absl::GetFlag(FLAGS_db);
    if (db.empty()) db = dir + "/load.db";
    std::string bin = absl::GetFlag(FLAGS_coordinator_bin);
    if (bin.empty()) bin = BesideThisBinary("kbench-coordinator");
    absl::StatusOr<std::unique_ptr<load::CoordinatorProcess>> started =
        load::CoordinatorProcess::Start(bin, db, absl::GetFlag(FLAGS_coordinator_args), dir + "/coordinator.log");
    if (!started.ok()) {
      std::cerr << kProgram << ": " << started.status().message() << "\n";
      return 1;
    }
    coordinator = *std::move(started);
    config->address = coordinator->address();
    pid = coordinator->pid();
    std::cerr << kProgram << ": coordinator " << pid << " on " << config->address << ", log " << dir
              << "/coordinator.log\n";
  }

  const load::LoadReport report = load::RunLoad(*config, pid);
  load::PrintReport(*config, report, stdout);
  bool ok = load::Correct(report);
  if (coordinator != nullptr) {
    const int status = coordinator->Stop();
    if (status != 0) {
      std::printf("the coordinator exited with status %d on SIGTERM (log kept in %s)\n", status, dir.c_str());
      ok = false;
    }
  }
  if (!dir.empty() && ok) std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
