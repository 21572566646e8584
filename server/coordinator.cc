// The coordinator's logic. Each call reads the clock once and does its durable work in the store,
// so that the class itself holds no mutable state and needs no lock.
#include "server/coordinator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/names.h"
#include "api/validate.h"
#include "server/catalog.h"
#include "server/ids.h"
#include "server/matching.h"

namespace kbench::server {
namespace {

constexpr int kDefaultListLimit = 50;
constexpr int kMaxListLimit = 1000;
constexpr size_t kMaxIdempotencyKeyBytes = 256;
constexpr int kJobIdAttempts = 3;  // Fresh ids to try should a random one collide.

double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

std::string DescribeSelector(const v1::GpuSelector& s) {
  std::vector<std::string> parts;
  if (s.backend() != v1::BACKEND_UNSPECIFIED) parts.push_back(absl::StrCat("backend=", api::BackendName(s.backend())));
  if (!s.model().empty()) parts.push_back(absl::StrCat("model=", s.model()));
  if (s.min_compute_capability() > 0) parts.push_back(absl::StrCat("min_compute_capability=", s.min_compute_capability()));
  std::vector<std::pair<std::string, std::string>> labels(s.labels().begin(), s.labels().end());
  std::sort(labels.begin(), labels.end());
  for (const auto& [k, v] : labels) parts.push_back(absl::StrCat("label ", k, "=", v));
  return parts.empty() ? "any" : absl::StrJoin(parts, ", ");
}

const v1::OpInfo* FindOp(const std::vector<v1::OpInfo>& catalog, absl::string_view name) {
  for (const auto& op : catalog)
    if (op.name() == name) return &op;
  return nullptr;
}

std::string GpuModel(const v1::WorkerInfo& info) {
  return info.devices().empty() ? std::string("none") : info.devices(0).name();
}

absl::Status Required(absl::string_view field) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": required"));
}

}  // namespace

Coordinator::Coordinator(CoordinatorConfig config, Store* store, const Clock* clock, CoordinatorObserver* observer)
    : config_(config), store_(store), clock_(clock), observer_(observer) {}

absl::StatusOr<SubmitOutcome> Coordinator::Submit(v1::JobSpec spec, absl::string_view idempotency_key) {
  if (idempotency_key.size() > kMaxIdempotencyKeyBytes)
    return absl::InvalidArgumentError(
        absl::StrCat("idempotency_key: at most ", kMaxIdempotencyKeyBytes, " bytes, got ", idempotency_key.size()));
  if (absl::Status s = api::ValidateSpecStructure(spec); !s.ok()) return s;
  // A retried submission gets its job back even if the fleet changed since the first one.
  if (!idempotency_key.empty()) {
    absl::StatusOr<std::optional<v1::Job>> existing = store_->FindJobByIdempotencyKey(idempotency_key);
    if (!existing.ok()) return existing.status();
    if (existing->has_value()) return SubmitOutcome{(*existing)->job_id(), true};
  }

  absl::StatusOr<std::vector<WorkerRecord>> workers = store_->ListWorkers();
  if (!workers.ok()) return workers.status();
  if (workers->empty()) return absl::FailedPreconditionError("no worker has registered yet; cannot validate op");
  // Every registered worker counts, lost ones too: the job is durable and waits for them to return.
  std::vector<const v1::WorkerInfo*> all, matching;
  for (const WorkerRecord& w : *workers) {
    all.push_back(&w.info);
    if (WorkerMatches(spec.selector(), w.info)) matching.push_back(&w.info);
  }
  if (matching.empty())
    return absl::FailedPreconditionError(absl::StrCat("spec.selector: no registered worker matches (",
                                                      DescribeSelector(spec.selector()), "); cannot validate op"));
  const std::vector<v1::OpInfo> catalog = MergeCatalogs(matching);
  const v1::OpInfo* op = FindOp(catalog, spec.op());
  if (op == nullptr) {
    if (FindOp(MergeCatalogs(all), spec.op()) != nullptr)
      return absl::InvalidArgumentError(absl::StrCat("spec.op: op '", spec.op(),
                                                     "' is on no worker matching spec.selector (",
                                                     DescribeSelector(spec.selector()), ")"));
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.op: unknown op '", spec.op(), "' (known: ",
        absl::StrJoin(catalog, ", ", [](std::string* out, const v1::OpInfo& o) { out->append(o.name()); }), ")"));
  }
  // Memory is checked against the devices that could actually run the op.
  std::vector<const v1::WorkerInfo*> with_op;
  for (const v1::WorkerInfo* w : matching)
    if (std::any_of(w->catalog().begin(), w->catalog().end(), [&](const v1::OpInfo& o) { return o.name() == spec.op(); }))
      with_op.push_back(w);
  if (absl::Status s = api::ResolveAgainstOp(*op, MaxMatchingMemoryBytes(spec.selector(), with_op), &spec); !s.ok())
    return s;
  if (api::ExpandProblems(*op, spec).empty())
    return absl::InvalidArgumentError(
        absl::StrCat("spec.problems: the job selects no problem (op '", op->name(),
                     "' has no default preset, or no shape has a requested dtype); give a preset or a shape"));

  v1::Job job;
  *job.mutable_spec() = std::move(spec);
  job.set_state(v1::QUEUED);
  job.set_created_unix_ms(clock_->NowUnixMs());
  job.set_idempotency_key(std::string(idempotency_key));
  absl::StatusOr<InsertOutcome> inserted = absl::InternalError("no job id tried");
  for (int i = 0; i < kJobIdAttempts; ++i) {
    job.set_job_id(RandomId("j", 12));
    inserted = store_->InsertJob(job);
    if (!absl::IsAlreadyExists(inserted.status())) break;
  }
  if (!inserted.ok()) return inserted.status();
  if (inserted->inserted && observer_ != nullptr) observer_->JobSubmitted();
  return SubmitOutcome{inserted->job.job_id(), !inserted->inserted};
}

absl::StatusOr<v1::Job> Coordinator::GetJob(absl::string_view job_id) {
  if (job_id.empty()) return Required("job_id");
  return store_->GetJob(job_id);
}

absl::StatusOr<std::vector<v1::Job>> Coordinator::ListJobs(int limit, v1::JobState state) {
  if (!v1::JobState_IsValid(state)) return absl::InvalidArgumentError(absl::StrCat("state: unknown value ", state));
  if (limit <= 0) limit = kDefaultListLimit;
  return store_->ListJobs(std::min(limit, kMaxListLimit), state);
}

absl::StatusOr<v1::Job> Coordinator::CancelJob(absl::string_view job_id) {
  if (job_id.empty()) return Required("job_id");
  absl::StatusOr<Transition> t = store_->CancelJob(job_id, clock_->NowUnixMs());
  if (!t.ok()) return t.status();
  if (t->previous_state != v1::CANCELLED_JOB) ObserveFinished(t->job, t->previous_state == v1::RUNNING);
  return std::move(t->job);
}

absl::StatusOr<JobResults> Coordinator::GetResults(absl::string_view job_id, bool include_samples) {
  if (job_id.empty()) return Required("job_id");
  absl::StatusOr<v1::Job> job = store_->GetJob(job_id);
  if (!job.ok()) return job.status();
  absl::StatusOr<std::vector<v1::Result>> results = store_->GetResults(job_id, include_samples);
  if (!results.ok()) return results.status();
  return JobResults{*std::move(job), *std::move(results)};
}

std::string Coordinator::WorkerState(const WorkerRecord& w, int64_t now_ms) const {
  if (now_ms - w.last_heartbeat_unix_ms > config_.worker_lost_after.count()) return "lost";
  return w.state.empty() ? "idle" : w.state;
}

absl::StatusOr<std::vector<v1::WorkerStatus>> Coordinator::ListWorkers() {
  absl::StatusOr<std::vector<WorkerRecord>> workers = store_->ListWorkers();
  if (!workers.ok()) return workers.status();
  const int64_t now = clock_->NowUnixMs();
  std::vector<v1::WorkerStatus> out;
  for (WorkerRecord& w : *workers) {
    v1::WorkerStatus& s = out.emplace_back();
    s.set_state(WorkerState(w, now));
    s.set_last_heartbeat_unix_ms(w.last_heartbeat_unix_ms);
    s.set_current_job_id(w.current_job_id);
    *s.mutable_info() = std::move(w.info);
  }
  return out;
}

absl::StatusOr<std::vector<v1::OpInfo>> Coordinator::ListKernels(absl::string_view op) {
  absl::StatusOr<std::vector<WorkerRecord>> workers = store_->ListWorkers();
  if (!workers.ok()) return workers.status();
  std::vector<const v1::WorkerInfo*> infos;
  for (const WorkerRecord& w : *workers) infos.push_back(&w.info);
  std::vector<v1::OpInfo> catalog = MergeCatalogs(infos);
  if (op.empty()) return catalog;
  const v1::OpInfo* found = FindOp(catalog, op);
  if (found == nullptr)
    return absl::NotFoundError(absl::StrCat(
        "op '", op, "' is on no registered worker (known: ",
        absl::StrJoin(catalog, ", ", [](std::string* out, const v1::OpInfo& o) { out->append(o.name()); }), ")"));
  return std::vector<v1::OpInfo>{*found};
}

absl::StatusOr<RegisterOutcome> Coordinator::RegisterWorker(v1::WorkerInfo info) {
  if (info.devices().empty()) return absl::InvalidArgumentError("info.devices: a worker needs at least one device");
  for (int i = 0; i < info.catalog_size(); ++i)
    if (info.catalog(i).name().empty())
      return absl::InvalidArgumentError(absl::StrCat("info.catalog[", i, "].name: required"));
  bool keep_id = false;
  if (!info.worker_id().empty()) {
    absl::StatusOr<WorkerRecord> known = store_->GetWorker(info.worker_id());
    if (known.ok()) keep_id = true;
    else if (!absl::IsNotFound(known.status())) return known.status();
  }
  // An id the coordinator does not know (say, from before its database was replaced) is not taken
  // over: ids are the coordinator's to assign.
  if (!keep_id) info.set_worker_id(RandomId("w", 12));
  if (absl::Status s = store_->UpsertWorker(info, clock_->NowUnixMs()); !s.ok()) return s;
  return RegisterOutcome{info.worker_id(), config_.heartbeat_interval.count()};
}

absl::StatusOr<std::vector<std::string>> Coordinator::Heartbeat(absl::string_view worker_id) {
  if (worker_id.empty()) return Required("worker_id");
  return store_->Heartbeat(worker_id, clock_->NowUnixMs());
}

absl::StatusOr<LeaseOutcome> Coordinator::LeaseJob(absl::string_view worker_id) {
  if (worker_id.empty()) return Required("worker_id");
  absl::StatusOr<WorkerRecord> worker = store_->GetWorker(worker_id);
  if (!worker.ok()) return worker.status();
  // Expired leases first, so that their jobs are back in the queue for this very request.
  if (absl::StatusOr<std::vector<Transition>> r = RequeueExpired(); !r.ok()) return r.status();
  const int64_t now = clock_->NowUnixMs();
  const v1::WorkerInfo& info = worker->info;
  absl::StatusOr<std::optional<Lease>> lease = store_->LeaseNextJob(
      worker_id, [&info](const v1::JobSpec& spec) { return WorkerCanRun(info, spec); }, now,
      config_.lease_ttl.count(), RandomId("l", 16));
  if (!lease.ok()) return lease.status();
  if (!lease->has_value()) return LeaseOutcome{};
  Lease& l = **lease;
  // Queue wait is measured for first attempts only: a retry's wait would start at its requeue, which
  // the job does not record.
  if (observer_ != nullptr && l.job.attempts() == 1)
    observer_->JobLeased(Seconds(std::max<int64_t>(0, now - l.job.created_unix_ms())));
  return LeaseOutcome{true, std::move(l.job), std::move(l.lease_id), l.expires_unix_ms};
}

absl::StatusOr<ProgressOutcome> Coordinator::ReportProgress(absl::string_view lease_id, const v1::Progress* progress,
                                                            const std::vector<v1::Result>& results) {
  if (lease_id.empty()) return Required("lease_id");
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].index() < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("results[", i, "].index: must be >= 0, got ", results[i].index()));
  const int64_t now = clock_->NowUnixMs();
  absl::StatusOr<Lease> lease = store_->ExtendLease(lease_id, now, config_.lease_ttl.count(), progress);
  if (!lease.ok()) return lease.status();
  if (!results.empty()) {
    absl::StatusOr<std::vector<int32_t>> added = store_->AppendResults(lease_id, now, results);
    if (!added.ok()) return added.status();
    if (observer_ != nullptr)
      for (const v1::Result& r : results)
        if (std::find(added->begin(), added->end(), r.index()) != added->end()) observer_->ResultStored(r.status());
  }
  return ProgressOutcome{lease->expires_unix_ms, lease->job.state() == v1::CANCELLED_JOB};
}

absl::StatusOr<v1::Job> Coordinator::CompleteJob(absl::string_view lease_id, bool failed, absl::string_view error) {
  if (lease_id.empty()) return Required("lease_id");
  absl::StatusOr<Transition> t = store_->CompleteJob(lease_id, clock_->NowUnixMs(), failed, error);
  if (!t.ok()) return t.status();
  // A cancelled job was counted when it was cancelled.
  if (t->previous_state != v1::CANCELLED_JOB) ObserveFinished(t->job, /*ran=*/true);
  return std::move(t->job);
}

absl::StatusOr<std::vector<Transition>> Coordinator::RequeueExpired() {
  absl::StatusOr<std::vector<Transition>> changed = store_->RequeueExpired(clock_->NowUnixMs(), config_.max_attempts);
  if (!changed.ok() || observer_ == nullptr) return changed;
  for (const Transition& t : *changed) {
    if (t.job.state() == v1::QUEUED) observer_->JobRequeued();
    else if (t.job.state() == v1::FAILED) ObserveFinished(t.job, /*ran=*/true);
  }
  return changed;
}

void Coordinator::ObserveFinished(const v1::Job& job, bool ran) {
  if (observer_ == nullptr) return;
  observer_->JobFinished(job.state(),
                         ran ? Seconds(std::max<int64_t>(0, job.finished_unix_ms() - job.started_unix_ms())) : -1.0);
}

absl::Status Coordinator::PublishSnapshot() {
  if (observer_ == nullptr) return absl::OkStatus();
  absl::StatusOr<std::map<v1::JobState, int64_t>> counts = store_->CountJobsByState();
  if (!counts.ok()) return counts.status();
  absl::StatusOr<std::vector<WorkerRecord>> workers = store_->ListWorkers();
  if (!workers.ok()) return workers.status();
  FleetSnapshot snap;
  snap.queued = (*counts)[v1::QUEUED];
  snap.running = (*counts)[v1::RUNNING];
  const int64_t now = clock_->NowUnixMs();
  for (const WorkerRecord& w : *workers) ++snap.workers[{WorkerState(w, now), GpuModel(w.info)}];
  observer_->Snapshot(snap);
  return absl::OkStatus();
}

}  // namespace kbench::server
