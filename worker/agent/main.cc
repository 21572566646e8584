// kbench-worker: given a coordinator, leases jobs from it; given --listen, serves the Worker service
// (a job sent straight to this worker: a single node without a coordinator), under the coordinator's
// TLS and token rules (server/auth/). Flags live here only; everything below main() takes
// configuration structs.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/channel.h"
#include "api/limits.h"
#include "api/parse_errors.h"
#include "grpcpp/grpcpp.h"
#include "server/auth/server_security.h"
#include "worker/help_flags.h"
#include "worker/agent/agent.h"
#include "worker/calibration_cache.h"
#include "worker/isolation/child_env.h"
#include "worker/agent/backend_factory.h"
#include "worker/agent/device_selection.h"
#include "worker/agent/worker_node.h"
#include "worker/agent/worker_service.h"

ABSL_FLAG(std::string, coordinator, "", "Coordinator host:port to lease jobs from; empty: none (then --listen serves alone)");
ABSL_FLAG(std::string, listen, "",
          "host:port of the Worker service, which takes jobs straight from a caller: for a single node without a "
          "coordinator (port 0 picks a free one). Empty (the default): not served. Beyond loopback it needs "
          "--listen-token-file (or --listen-insecure)");
ABSL_FLAG(std::string, listen_tls_cert, "", "Worker service: PEM certificate chain to serve TLS with (with --listen-tls-key)");
ABSL_FLAG(std::string, listen_tls_key, "", "Worker service: PEM private key of --listen-tls-cert");
ABSL_FLAG(std::string, listen_tls_client_ca, "",
          "Worker service: PEM roots; callers must present a client certificate they signed (needs --listen-tls-cert)");
ABSL_FLAG(std::string, listen_token_file, "",
          "Worker service: bearer tokens with roles, in the coordinator's --token-file format (RunJob takes the "
          "submit role, GetInfo any token); default: no tokens");
ABSL_FLAG(bool, listen_insecure, false, "Worker service: allow --listen beyond loopback without --listen-token-file");
ABSL_FLAG(std::string, name, "", "Worker name; default the host name");
ABSL_FLAG(std::vector<std::string>, label, {}, "Labels k=v, repeatable or comma-separated (--label gpu=a,rack=3)");
ABSL_FLAG(std::string, backend, "auto", "Backend: auto (CUDA when a GPU is visible, else CPU), cpu or cuda");
ABSL_FLAG(int, device, -1, "One CUDA device ordinal: the one-GPU form of --devices (default: see --devices)");
ABSL_FLAG(std::string, devices, "",
          "CUDA devices, one runner child and one job at a time each: all (the default) or a comma list of "
          "ordinals (0,1)");
ABSL_FLAG(int, cpu_devices, 0,
          "CPU backend: N test \"devices\" that share the host (uuids <host uuid>-cpu0...), one runner and one job "
          "each, to exercise the multi-device paths without a GPU; 0: the host as one device");
ABSL_FLAG(std::string, runner_log, "",
          "File for the runner's output, with .<device index> appended when there are several devices (default: a "
          "file per runner in the temporary directory)");
ABSL_FLAG(std::string, calibration_cache, "",
          "Calibration cache file, with .<device uuid> appended when there are several devices; default "
          "$XDG_CACHE_HOME or ~/.cache/kbench/calibration-<device uuid>.txt");
ABSL_FLAG(bool, recalibrate, false, "Measure the device's ceilings even when the cache holds them");
ABSL_FLAG(std::string, plugin_cache, "",
          "Folder of the kernel plugins fetched for jobs, by SHA-256 (default: kbench-plugins-UID in the temporary "
          "directory)");
ABSL_FLAG(int64_t, max_plugin_bytes, int64_t{256} << 20, "Largest kernel plugin this worker fetches, in bytes");
ABSL_FLAG(int, lease_wait_ms, 10'000,
          "Long poll: how long the coordinator may hold an empty LeaseJob call (0..30000); 0: poll with backoff");
ABSL_FLAG(bool, quick_calibration, false,
          "Shorter calibration (still measured; smaller memory streams, fewer repetitions, the same GEMMs): for tests");
ABSL_FLAG(std::string, token, "", "Bearer token for the coordinator (a worker-role token); default $KBENCH_TOKEN");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA certificates that verify the coordinator: connect with TLS (default: plaintext)");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate for a coordinator that requires one (mTLS; with --tls-key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");

namespace kbench::worker {
namespace {

// Rewrites argv for absl: dashes in flag names become underscores (--quick-calibration is
// --quick_calibration), and every --label is folded into one comma list, as absl keeps only the
// last value of a repeated flag.
std::vector<char*> NormalizeArgs(int argc, char** argv, std::vector<std::string>& storage) {
  std::vector<std::string> labels, args;
  bool flags_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (flags_done || a.size() < 2 || a[0] != '-') {
      args.push_back(a);
      continue;
    }
    if (a == "--") {
      flags_done = true;
      args.push_back(a);
      continue;
    }
    const size_t dashes = a[1] == '-' ? 2 : 1;
    const size_t name_end = std::min(a.find('='), a.size());
    std::replace(a.begin() + static_cast<long>(dashes), a.begin() + static_cast<long>(name_end), '-', '_');
    const std::string name = a.substr(dashes, name_end - dashes);
    if (name == "label") {
      if (name_end < a.size()) labels.push_back(a.substr(name_end + 1));
      else if (i + 1 < argc) labels.emplace_back(argv[++i]);
      continue;
    }
    args.push_back(a);
  }
  if (!labels.empty()) args.insert(args.begin(), "--label=" + absl::StrJoin(labels, ","));
  storage.reserve(args.size() + 1);
  storage.emplace_back(argv[0]);
  for (auto& a : args) storage.push_back(std::move(a));
  std::vector<char*> out;
  for (auto& a : storage) out.push_back(a.data());
  return out;
}

absl::StatusOr<std::map<std::string, std::string>> ParseLabels(const std::vector<std::string>& items) {
  std::map<std::string, std::string> labels;
  for (const std::string& item : items) {
    if (item.empty()) continue;
    std::pair<std::string, std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.first.empty() || item.find('=') == std::string::npos)
      return absl::InvalidArgumentError(absl::StrCat("--label: expected k=v, got '", item, "'"));
    labels[kv.first] = kv.second;
  }
  return labels;
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "worker";
  return buf;
}

// One runner child per selected device, each calibrated or taken from its own cache entry (by uuid)
// before the worker registers.
absl::StatusOr<std::vector<std::unique_ptr<IsolatedBackend>>> MakeCalibratedBackends() {
  const std::string kind = ResolveBackendKind(absl::GetFlag(FLAGS_backend));
  if (kind != "cpu" && kind != "cuda")
    return absl::InvalidArgumentError(absl::StrCat("--backend: unknown backend '", kind, "' (known: auto, cpu, cuda)"));
  const int visible_gpus = kind == "cuda" ? VisibleCudaDevices() : 0;
  if (visible_gpus < 0) return absl::InvalidArgumentError("--backend: this build has no CUDA backend (KBENCH_CUDA=OFF)");
  absl::StatusOr<std::vector<SelectedDevice>> selected =
      SelectDevices({.kind = kind,
                     .devices = absl::GetFlag(FLAGS_devices),
                     .device = absl::GetFlag(FLAGS_device),
                     .cpu_devices = absl::GetFlag(FLAGS_cpu_devices),
                     .visible_gpus = visible_gpus});
  if (!selected.ok()) return selected.status();
  const int count = static_cast<int>(selected->size());
  const std::string runner_log = absl::GetFlag(FLAGS_runner_log);
  std::vector<std::unique_ptr<IsolatedBackend>> backends;
  for (int i = 0; i < count; ++i) {
    const SelectedDevice& d = (*selected)[i];
    absl::StatusOr<std::unique_ptr<IsolatedBackend>> made =
        MakeBackend({.kind = kind,
                     .device = d.ordinal,
                     .cpu_device = d.cpu_device,
                     .quick_calibration = absl::GetFlag(FLAGS_quick_calibration),
                     .runner_log = runner_log.empty() || count == 1 ? runner_log : absl::StrCat(runner_log, ".", i)});
    if (!made.ok()) return made.status();
    Backend& backend = **made;
    absl::StatusOr<CalibrationOutcome> calibration = LoadOrCalibrate(
        backend, {.path = CalibrationCachePathFor(absl::GetFlag(FLAGS_calibration_cache), count, backend.device().uuid()),
                  .recalibrate = absl::GetFlag(FLAGS_recalibrate),
                  .quick = absl::GetFlag(FLAGS_quick_calibration),
                  // A quick (test) calibration is retried once, at once: it must not hold up a worker's start.
                  .max_attempts = absl::GetFlag(FLAGS_quick_calibration) ? 2 : 3,
                  .retry_delay = std::chrono::milliseconds(absl::GetFlag(FLAGS_quick_calibration) ? 200 : 5000)});
    if (!calibration.ok()) return calibration.status();
    for (const std::string& refusal : calibration->refusals)
      std::cerr << "kbench-worker: device " << i << ": calibration refused, " << refusal << "\n";
    if (!calibration->calibration.warning().empty())
      std::cerr << "kbench-worker: device " << i << ": WARNING: " << calibration->calibration.warning()
                << "; results will be flagged\n";
    const v1::Calibration& c = calibration->calibration;
    std::cerr << "kbench-worker: device " << i << " " << backend.device().name() << " (" << backend.device().uuid()
              << "): copy " << c.copy_bytes_per_second() / 1e9 << " GB/s, f32 "
              << c.peak_flops_per_second().at("f32") / 1e9 << " GFLOP/s ("
              << (calibration->from_cache ? "cached in " : "measured; ") << calibration->path << ")\n";
    if (!calibration->save_status.ok())
      std::cerr << "kbench-worker: calibration not cached: " << calibration->save_status.message() << "\n";
    backends.push_back(std::move(*made));
  }
  return backends;
}

int Fail(const absl::Status& s) {
  std::cerr << "kbench-worker: " << s.message() << "\n";
  return 2;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "measures kernels on this host's devices, for a coordinator or, on a single node without one, for a caller.\n"
      "  kbench-worker --coordinator host:port [--label k=v]... [--devices all|0,1]\n"
      "  kbench-worker --listen 127.0.0.1:0 [--listen-token-file FILE] [--listen-tls-cert C --listen-tls-key K]\n"
      "With --coordinator it leases jobs; with --listen it serves the Worker service (GetInfo, RunJob: a job sent\n"
      "straight to this worker, through the same planner and runner as a leased one), off by default, under the\n"
      "coordinator's TLS and token rules. One runner child per device (every visible GPU by default); one job at\n"
      "a time on each.");
  HelpListsFlagsOf("worker/agent/main.cc");
  std::vector<std::string> storage;
  std::vector<char*> args = NormalizeArgs(argc, argv, storage);
  absl::ParseCommandLine(static_cast<int>(args.size()), args.data());

  // SIGTERM/SIGINT are taken by sigwait below; blocked before any thread starts so none takes them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<std::map<std::string, std::string>> labels = ParseLabels(absl::GetFlag(FLAGS_label));
  if (!labels.ok()) return Fail(labels.status());
  const std::string listen = absl::GetFlag(FLAGS_listen);
  const std::string coordinator = absl::GetFlag(FLAGS_coordinator);
  if (listen.empty() && coordinator.empty())
    return Fail(absl::InvalidArgumentError("nothing to do: give --listen, --coordinator or both"));
  if (const int wait = absl::GetFlag(FLAGS_lease_wait_ms); wait < 0 || wait > api::kMaxLeaseWaitMs)
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("--lease-wait-ms: ", wait, " is outside 0..", api::kMaxLeaseWaitMs)));
  // The coordinator's connection: the token (from the environment keeps it out of the process list)
  // and TLS, whose files are checked now rather than failing every call later.
  const char* env_token = std::getenv("KBENCH_TOKEN");
  const api::ChannelOptions coordinator_channel{
      .address = coordinator,
      .token = !absl::GetFlag(FLAGS_token).empty() ? absl::GetFlag(FLAGS_token) : (env_token ? env_token : ""),
      .tls_ca_path = absl::GetFlag(FLAGS_tls_ca),
      .tls_cert_path = absl::GetFlag(FLAGS_tls_cert),
      .tls_key_path = absl::GetFlag(FLAGS_tls_key)};
  if (auto credentials = api::MakeChannelCredentials(coordinator_channel); !credentials.ok())
    return Fail(credentials.status());
  // The Worker service's TLS and tokens, under the coordinator's rules (server/auth/): checked now,
  // before any device is calibrated.
  std::unique_ptr<server::auth::ServerSecurity> security;
  if (!listen.empty()) {
    absl::StatusOr<std::unique_ptr<server::auth::ServerSecurity>> made = server::auth::ServerSecurity::Make(
        {.tls_cert_path = absl::GetFlag(FLAGS_listen_tls_cert),
         .tls_key_path = absl::GetFlag(FLAGS_listen_tls_key),
         .tls_client_ca_path = absl::GetFlag(FLAGS_listen_tls_client_ca),
         .token_file = absl::GetFlag(FLAGS_listen_token_file),
         .insecure = absl::GetFlag(FLAGS_listen_insecure),
         .flag_prefix = "listen-"},
        listen);
    if (!made.ok()) return Fail(made.status());
    security = std::move(*made);
    if (!security->warning().empty()) std::cerr << "kbench-worker: " << security->warning() << "\n";
    std::cerr << "kbench-worker: Worker service: " << security->Describe() << "\n";
  }
  // The token is copied; no child (the runner runs job code) and no /proc/<pid>/environ reader gets it.
  ScrubOwnSecrets();

  absl::StatusOr<std::vector<std::unique_ptr<IsolatedBackend>>> backends = MakeCalibratedBackends();
  if (!backends.ok()) return Fail(backends.status());

  // The catalog and the suite's version are what the first device's runner reported of its kernel
  // library: this process loads none (all devices are of one kind, so one catalog serves).
  std::vector<v1::OpInfo> catalog = backends->front()->catalog();
  WorkerConfig config{.name = absl::GetFlag(FLAGS_name).empty() ? HostName() : absl::GetFlag(FLAGS_name),
                      .labels = *labels,
                      .suite_version = backends->front()->library().suite_version()};
  std::vector<std::unique_ptr<Backend>> devices(std::make_move_iterator(backends->begin()),
                                                std::make_move_iterator(backends->end()));
  WorkerNode node(std::move(config), std::move(devices), std::move(catalog));

  WorkerService service(node);
  std::unique_ptr<grpc::Server> server;
  if (!listen.empty()) {
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort(listen, security->credentials(), &port);
    builder.SetMaxReceiveMessageSize(api::kMaxMessageBytes);
    builder.SetMaxSendMessageSize(api::kMaxMessageBytes);
    builder.RegisterService(security->Guard(&service));
    // A request that does not parse (invalid UTF-8) is INVALID_ARGUMENT naming the field, as on the coordinator.
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
    interceptors.push_back(api::MakeParseErrorInterceptorFactory());
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
    server = builder.BuildAndStart();
    if (server == nullptr || port == 0)
      return Fail(absl::UnavailableError(absl::StrCat("--listen: cannot listen on ", listen)));
    const std::string host = listen.substr(0, listen.rfind(':'));
    const std::string address = absl::StrCat(host, ":", port);
    node.set_address(address);
    std::cout << "kbench-worker listening on " << address << std::endl;
  }

  std::unique_ptr<Agent> agent;
  if (!coordinator.empty()) {
    AgentConfig agent_config;
    agent_config.coordinator = coordinator_channel;
    agent_config.plugin_cache_dir = absl::GetFlag(FLAGS_plugin_cache);
    agent_config.max_plugin_bytes = absl::GetFlag(FLAGS_max_plugin_bytes);
    agent_config.lease_wait = std::chrono::milliseconds(absl::GetFlag(FLAGS_lease_wait_ms));
    agent_config.on_registered = [](const std::string& id) {
      std::cout << "kbench-worker registered as " << id << std::endl;
    };
    agent = std::make_unique<Agent>(std::move(agent_config), node);
    agent->Start();
  }

  int sig = 0;
  sigwait(&signals, &sig);
  // The first SIGTERM drains: no new lease; the running job finishes and is reported. The agent's
  // waiter wakes this thread with a SIGTERM of its own once drained; another SIGTERM or a SIGINT
  // before that abandons the job, as a first SIGINT does.
  std::atomic<bool> drain_done{false};
  std::thread drain_waiter;
  bool drained = false;
  if (agent != nullptr && sig == SIGTERM) {
    std::cerr << "kbench-worker: SIGTERM: draining: leasing no new job; a running job finishes and is reported "
                 "first (SIGTERM or SIGINT again abandons it)\n";
    const pthread_t main_thread = pthread_self();
    agent->Drain();
    drain_waiter = std::thread([&agent, &drain_done, main_thread] {
      if (!agent->WaitDrained()) return;  // Stopped: the main thread is past its wait already.
      drain_done = true;
      pthread_kill(main_thread, SIGTERM);
    });
    sigwait(&signals, &sig);
    drained = drain_done;
  }
  if (drained)
    std::cerr << "kbench-worker: drained (no job running); shutting down\n";
  else
    std::cerr << "kbench-worker: signal " << sig << ", shutting down (the running job is abandoned)\n";
  // The running item cannot be interrupted in this process: past the grace period, leave anyway.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread grace([&] {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(5), [&] { return done; })) {
      std::cerr << "kbench-worker: still busy after 5 s; exiting\n";
      std::_Exit(0);
    }
  });
  node.Shutdown();
  if (agent) agent->Stop();
  if (drain_waiter.joinable()) drain_waiter.join();
  if (server) server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  grace.join();
  return 0;
}

}  // namespace
}  // namespace kbench::worker

int main(int argc, char** argv) { return kbench::worker::Main(argc, argv); }
