// The coordinator's logic, free of gRPC: validation of submissions against the fleet's catalog, the
// job lifecycle (queue, lease, progress, completion, expiry, cancellation) and the worker registry.
// The gRPC service (coordinator_service.h) only converts messages and statuses around these calls.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "kbench/v1/catalog.pb.h"
#include "kbench/v1/coordinator.pb.h"
#include "kbench/v1/job.pb.h"
#include "kbench/v1/result.pb.h"
#include "server/coordinator/baseline_cache.h"
#include "server/coordinator/clock.h"
#include "server/coordinator/fleet_cache.h"
#include "server/coordinator/observer.h"
#include "server/store/plugin_store.h"
#include "server/coordinator/regression.h"
#include "server/store/store.h"

namespace kbench::server {

// The label of a confirming re-run: the id of the job whose SLOWER result it confirms.
inline constexpr char kConfirmsLabel[] = "confirms";

struct CoordinatorConfig {
  std::chrono::milliseconds lease_ttl{30'000};          // A lease lives this long past its last report.
  int max_attempts = 3;                                  // Leases granted before an expiring job FAILS.
  std::chrono::milliseconds worker_lost_after{15'000};   // A worker without heartbeat this long is "lost".
  std::chrono::milliseconds heartbeat_interval{2'000};   // Told to workers at registration.
  RegressionConfig regression;                           // Verdicts of reported results.
  std::string baseline_branch = "main";                  // The "branch" label whose history is the baseline.
  double health_margin = 0.10;                           // A device this far below its model's median is unhealthy.
  size_t baseline_cache_bytes = size_t{64} << 20;        // Series baselines kept in memory; 0: none.
  // A SLOWER result is confirmed by one automatic re-run (a job labelled confirms=<job id>) before
  // its series' gauge reads it; false: the first SLOWER moves the gauge.
  bool confirm_regressions = true;
  // How long Submit may validate against the workers as last read (fleet_cache.h); 0: always read.
  std::chrono::milliseconds fleet_cache_max_age{1'000};
  // LeaseJob requeues expired leases first, but at most this often (by the coordinator's clock): an
  // idle fleet polls a thousand times a second, and a job expired for a few hundred milliseconds more
  // is nothing against a lease's seconds. The reaper requeues on its own period besides. 0: every time.
  std::chrono::milliseconds lease_requeue_interval{250};
};

struct SubmitOutcome {
  std::string job_id;
  bool deduplicated = false;  // The idempotency key matched an earlier job.
};

struct LeaseOutcome {
  bool granted = false;
  v1::Job job;
  std::string lease_id;
  int64_t lease_expires_unix_ms = 0;
  // Not granted: the registration the queue was matched against (narrowed to the device asked for),
  // so that a long poll can tell in memory which queued job would be granted to it.
  std::shared_ptr<const v1::WorkerInfo> matched_as;
};

struct ProgressOutcome {
  int64_t lease_expires_unix_ms = 0;
  bool cancelled = false;
};

struct RegisterOutcome {
  std::string worker_id;
  int64_t heartbeat_interval_ms = 0;
};

struct HistoryOutcome {
  std::vector<HistoryRow> points;   // Newest first.
  double baseline_median_ns = 0;    // The current baseline of the newest point's series; 0 without one.
  int baseline_results = 0;
};

struct JobResults {
  v1::Job job;
  std::vector<v1::Result> results;  // Ordered by index.
};

class Coordinator {
 public:
  // store, clock and observer must outlive the coordinator; observer may be null. Thread-safe.
  Coordinator(CoordinatorConfig config, Store* store, const Clock* clock, CoordinatorObserver* observer = nullptr);

  const CoordinatorConfig& config() const { return config_; }
  // How the verdicts' baselines came about (see baseline_cache.h).
  BaselineCache::Stats baseline_cache_stats() const { return baselines_.stats(); }
  // Where uploaded kernel plugins are kept, for the check that a job's plugins exist. Must outlive
  // the coordinator; without one, jobs naming a plugin are refused.
  void set_plugin_store(const PluginStore* plugins) { plugins_ = plugins; }
  // Told of every job that becomes QUEUED (submitted, a confirming re-run, or back after its lease
  // expired), after it is stored; LeaseJob's long polls wake on it. Null: nobody.
  using QueuedListener = std::function<void(const v1::Job& job)>;
  void set_queued_listener(QueuedListener listener);

  // User side.
  // Validates the spec (structure, then against the catalog of the workers its selector admits),
  // resolves it and stores it QUEUED. Nothing is stored on error.
  absl::StatusOr<SubmitOutcome> Submit(v1::JobSpec spec, absl::string_view idempotency_key);
  absl::StatusOr<v1::Job> GetJob(absl::string_view job_id);
  // limit <= 0: 50; capped at 1000. Newest first. Without the custom variants' sources, and only as
  // many jobs as fit in api::kMaxListResponseBytes (coordinator_budget.h).
  absl::StatusOr<std::vector<v1::Job>> ListJobs(int limit, v1::JobState state);
  absl::StatusOr<v1::Job> CancelJob(absl::string_view job_id);
  // Without samples when they do not fit in api::kMaxListResponseBytes (coordinator_budget.h).
  absl::StatusOr<JobResults> GetResults(absl::string_view job_id, bool include_samples);
  // Without catalogs when they do not fit in api::kMaxListResponseBytes (coordinator_budget.h).
  absl::StatusOr<std::vector<v1::WorkerStatus>> ListWorkers();
  // op empty: every op (those that fit in api::kMaxListResponseBytes); NOT_FOUND for an op no worker has.
  absl::StatusOr<std::vector<v1::OpInfo>> ListKernels(absl::string_view op);
  // A series' history with verdicts. INVALID_ARGUMENT without op or with an unknown dtype;
  // limit <= 0: 100; capped at 1000.
  absl::StatusOr<HistoryOutcome> GetHistory(HistoryQuery query);
  // Admin controls of the series (series_controls.h; the caller checks the admin role). Records the
  // control with who (the caller's token name; "" without tokens) and now; a step without a time is at
  // now. INVALID_ARGUMENT naming the field (CheckSeriesControl).
  absl::StatusOr<v1::SeriesControl> SetSeriesControl(v1::SeriesControl control, absl::string_view who);
  // op empty: every op. In id order.
  absl::StatusOr<std::vector<v1::SeriesControl>> ListSeriesControls(absl::string_view op);

  // Worker side.
  // Checks every field against its limit (api/message_bounds.h). Keeps info.worker_id when it names a
  // registered worker; otherwise assigns "w-<random>".
  absl::StatusOr<RegisterOutcome> RegisterWorker(v1::WorkerInfo info);
  // Returns the ids of cancelled jobs the worker still holds.
  absl::StatusOr<std::vector<std::string>> Heartbeat(absl::string_view worker_id);
  // Requeues expired leases first, then grants the oldest queued job the worker can run, if any.
  // A device_uuid narrows the match to that device of the worker (one lease loop per device);
  // INVALID_ARGUMENT when the worker registered no such device.
  absl::StatusOr<LeaseOutcome> LeaseJob(absl::string_view worker_id, absl::string_view device_uuid = "");
  // Checks the report's fields against their limits and against the job (coordinator_report_check.h)
  // before anything is stored: INVALID_ARGUMENT naming the field, and nothing stored. Free text
  // (status messages, compile logs, progress.current) is cut to its limit instead.
  absl::StatusOr<ProgressOutcome> ReportProgress(absl::string_view lease_id, const v1::Progress* progress,
                                                 const std::vector<v1::Result>& results);
  // error is cut to api::kMaxLogBytes.
  absl::StatusOr<v1::Job> CompleteJob(absl::string_view lease_id, bool failed, absl::string_view error);

  // Housekeeping, run periodically by the Reaper (and directly by tests).
  // Releases expired leases: jobs go back to the queue or FAIL after max_attempts.
  absl::StatusOr<std::vector<Transition>> RequeueExpired();
  // Counts the queue and the fleet and hands the counts to the observer.
  absl::Status PublishSnapshot();

 private:
  // A history query's or series control's shape as its series are keyed (series_shape.h), resolved
  // against the op's entry in the fleet's catalog where a worker lists it.
  std::string SeriesShapeFor(absl::string_view op, absl::string_view shape);
  // The registration of the worker holding job's lease (from the fleet view unless it changed since);
  // null when it is no longer registered.
  absl::StatusOr<std::shared_ptr<const v1::WorkerInfo>> LeasingWorker(const v1::Job& job);
  // One verdict per result, against the baseline of each result's series. A result of a confirming
  // re-run is judged together with the result it confirms; indexes of results whose SLOWER waits for
  // a re-run go to *to_confirm (their series gauge does not move).
  absl::StatusOr<std::vector<ResultVerdict>> JudgeResults(const v1::Job& job, const std::vector<v1::Result>& results,
                                                          std::vector<size_t>* to_confirm);
  // Enqueues one re-run of each result's problem and variant (at most once per job and result).
  absl::Status EnqueueConfirmations(const v1::Job& job, const std::vector<v1::Result>& results,
                                    const std::vector<size_t>& to_confirm);
  // The series' baseline pooled, leaving out the results of exclude_job_id: the store lists its rows,
  // baselines_ supplies the samples it holds.
  // The series' pinned reference (its oldest main-branch runs), leaving out both jobs; empty when
  // config.regression.reference_results is 0.
  // after_ms: the series' last known step (results finished after it only; 0: none).
  absl::StatusOr<PooledBaseline> Reference(const SeriesKey& series, absl::string_view exclude_job_id,
                                           absl::string_view also_exclude, int64_t after_ms = 0);
  // also_exclude: a second job left out (the job a re-run confirms).
  absl::StatusOr<std::shared_ptr<const PooledBaseline>> Baseline(const SeriesKey& series,
                                                                 absl::string_view exclude_job_id,
                                                                 absl::string_view also_exclude = "",
                                                                 int64_t after_ms = 0);
  // Submit's checks of an ordinary job against the catalog (resolving its problems in place), and of
  // a plugin or A/B job (its plugins stored; with the workers' own suite on both sides, its op and pairs).
  absl::Status ResolveAgainstCatalog(const Fleet::Admitted& admitted, v1::JobSpec* spec) const;
  absl::Status CheckPluginJob(const v1::JobSpec& spec, const std::vector<v1::OpInfo>& catalog) const;
  // Submit's checks against the registered workers' catalogs; resolves spec in place.
  absl::Status ValidateAgainstFleet(const Fleet& fleet, v1::JobSpec* spec) const;
  // Stores the validated job QUEUED (or finds the one its idempotency key names).
  absl::StatusOr<SubmitOutcome> InsertQueued(v1::JobSpec spec, absl::string_view idempotency_key);
  // "idle", "busy" or "lost", from the heartbeat's age.
  std::string WorkerState(int64_t last_heartbeat_unix_ms, const std::string& state, int64_t now_ms) const;
  // ran: the job was RUNNING when it finished, so its last attempt's duration is meaningful.
  void ObserveFinished(const v1::Job& job, bool ran);

  const CoordinatorConfig config_;
  Store* const store_;
  const Clock* const clock_;
  CoordinatorObserver* const observer_;
  BaselineCache baselines_;
  FleetCache fleet_;
  // When LeaseJob last ran RequeueExpired (clock ms); claimed by compare-and-swap, so one caller runs it.
  std::atomic<int64_t> last_lease_requeue_ms_{std::numeric_limits<int64_t>::min()};
  const PluginStore* plugins_ = nullptr;
  void NotifyQueued(const v1::Job& job);
  absl::Mutex listener_mu_;
  QueuedListener queued_listener_ ABSL_GUARDED_BY(listener_mu_);
};

}  // namespace kbench::server
