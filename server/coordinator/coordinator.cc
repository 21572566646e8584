// The coordinator's logic. Each call reads the clock once and does its durable work in the store,
// so that the class itself holds no mutable state and needs no lock; its one cache (baselines_, of
// samples the store already holds) is thread-safe and never decides which results form a baseline.
#include "server/coordinator/coordinator.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/bounds.h"
#include "api/limits.h"
#include "api/message_bounds.h"
#include "api/names.h"
#include "api/plugin_spec.h"
#include "api/quote.h"
#include "api/stats/verdict.h"
#include "api/validate.h"
#include "server/coordinator/catalog.h"
#include "server/coordinator/coordinator_budget.h"
#include "server/coordinator/health.h"
#include "server/coordinator/ids.h"
#include "server/coordinator/matching.h"
#include "server/store/result_columns.h"

namespace kbench::server {
namespace {

constexpr int kDefaultListLimit = 50;
constexpr int kMaxListLimit = 1000;
constexpr int kDefaultHistoryLimit = 100;
constexpr int kMaxHistoryLimit = 1000;
constexpr int kJobIdAttempts = 3;  // Fresh ids to try should a random one collide.

double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

std::string DescribeSelector(const v1::GpuSelector& s) {
  std::vector<std::string> parts;
  if (s.backend() != v1::BACKEND_UNSPECIFIED) parts.push_back(absl::StrCat("backend=", api::BackendName(s.backend())));
  if (!s.model().empty()) parts.push_back(absl::StrCat("model=", api::Escape(s.model())));
  if (s.min_compute_capability() > 0) parts.push_back(absl::StrCat("min_compute_capability=", s.min_compute_capability()));
  std::vector<std::pair<std::string, std::string>> labels(s.labels().begin(), s.labels().end());
  std::sort(labels.begin(), labels.end());
  for (const auto& [k, v] : labels) parts.push_back(absl::StrCat("label ", api::Escape(k), "=", api::Escape(v)));
  return parts.empty() ? "any" : api::CutText(absl::StrJoin(parts, ", "), 1024);
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

// An id a caller sends: required, and short enough to be looked up (and echoed in an error).
absl::Status CheckId(absl::string_view field, absl::string_view id) {
  return api::CheckRequired(field, id, api::kMaxIdBytes);
}

std::string LabelOf(const v1::JobSpec& spec, const std::string& name) {
  auto it = spec.labels().find(name);
  return it == spec.labels().end() ? std::string() : it->second;
}

}  // namespace

Coordinator::Coordinator(CoordinatorConfig config, Store* store, const Clock* clock, CoordinatorObserver* observer)
    : config_(config),
      store_(store),
      clock_(clock),
      observer_(observer),
      baselines_(config.baseline_cache_bytes),
      fleet_(config.fleet_cache_max_age) {}

absl::StatusOr<SubmitOutcome> Coordinator::Submit(v1::JobSpec spec, absl::string_view idempotency_key) {
  if (absl::Status s = api::CheckSize("idempotency_key", idempotency_key, api::kMaxIdempotencyKeyBytes); !s.ok())
    return s;
  if (absl::Status s = api::ValidateSpecStructure(spec); !s.ok()) return s;
  // A retried submission gets its job back even if the fleet changed since the first one.
  if (!idempotency_key.empty()) {
    absl::StatusOr<std::optional<v1::Job>> existing = store_->FindJobByIdempotencyKey(idempotency_key);
    if (!existing.ok()) return existing.status();
    if (existing->has_value()) return SubmitOutcome{(*existing)->job_id(), true};
  }

  // On a cached view of the fleet first (fleet_cache.h); a refusal is only ever given on a fresh one.
  for (FleetCache::Want want : {FleetCache::Want::kUnchanged, FleetCache::Want::kFresh}) {
    absl::StatusOr<FleetCache::View> view = fleet_.Get(store_, want);
    if (!view.ok()) return view.status();
    v1::JobSpec resolved = spec;
    absl::Status valid = ValidateAgainstFleet(*view->fleet, &resolved);
    if (valid.ok()) return InsertQueued(std::move(resolved), idempotency_key);
    if (!view->cached) return valid;
  }
  return absl::InternalError("unreachable: a fresh view always decides");
}

absl::Status Coordinator::ValidateAgainstFleet(const Fleet& fleet, v1::JobSpec* spec_ptr) const {
  v1::JobSpec& spec = *spec_ptr;
  if (fleet.workers().empty()) return absl::FailedPreconditionError("no worker has registered yet; cannot validate op");
  // Every registered worker counts, lost ones too: the job is durable and waits for them to return.
  const std::shared_ptr<const Fleet::Admitted> admitted = fleet.Admit(spec.selector());
  if (admitted->matching.empty())
    return absl::FailedPreconditionError(absl::StrCat("spec.selector: no registered worker matches (",
                                                      DescribeSelector(spec.selector()), "); cannot validate op"));
  const std::vector<v1::OpInfo>& catalog = admitted->catalog;
  if (api::NeedsPluginPlanning(spec)) {
    // A plugin's ops are known only once a worker's runner loads it: the worker plans such a job and
    // fails it with the reason. What can be checked here is.
    if (absl::Status s = CheckPluginJob(spec, catalog); !s.ok()) return s;
  } else if (absl::Status s = ResolveAgainstCatalog(*admitted, &spec); !s.ok()) {
    return s;
  }
  return absl::OkStatus();
}

absl::Status Coordinator::CheckPluginJob(const v1::JobSpec& spec, const std::vector<v1::OpInfo>& catalog) const {
  const std::vector<std::string> hashes = api::PluginHashes(spec);
  if (!hashes.empty() && plugins_ == nullptr)
    return absl::FailedPreconditionError("this coordinator keeps no kernel plugins (start it with --plugin_dir)");
  // A plugin's results are not the suite's: they must never become the main branch's baseline.
  if (!hashes.empty() && LabelOf(spec, "branch") == config_.baseline_branch)
    return absl::InvalidArgumentError(absl::StrCat("spec.labels: a job on a kernel plugin cannot be labelled branch=",
                                                   config_.baseline_branch, " (its results would join that baseline)"));
  for (const std::string& sha : hashes)
    if (absl::StatusOr<int64_t> size = plugins_->SizeOf(sha); !size.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("spec: plugin ", sha, " is not on this coordinator; upload it first (UploadPlugin)"));
  if (!hashes.empty() || spec.op().empty()) return absl::OkStatus();
  // Both sides are the workers' own suite: the op and the pairs must be in their catalog.
  const v1::OpInfo* op = FindOp(catalog, spec.op());
  if (op == nullptr) return absl::InvalidArgumentError(absl::StrCat("spec.op: unknown op ", api::Quote(spec.op())));
  auto has = [&](const std::string& v) {
    return std::any_of(op->variants().begin(), op->variants().end(), [&](const auto& x) { return x.name() == v; });
  };
  for (int i = 0; i < spec.ab().pairs_size(); ++i)
    for (const std::string* v : {&spec.ab().pairs(i).base_variant(), &spec.ab().pairs(i).head_variant()})
      if (!has(*v))
        return absl::InvalidArgumentError(
            absl::StrCat("spec.ab.pairs[", i, "]: unknown variant ", api::Quote(*v), " of op '", spec.op(), "'"));
  return absl::OkStatus();
}

absl::Status Coordinator::ResolveAgainstCatalog(const Fleet::Admitted& admitted, v1::JobSpec* spec_ptr) const {
  v1::JobSpec& spec = *spec_ptr;
  const std::vector<v1::OpInfo>& catalog = admitted.catalog;
  const v1::OpInfo* op = FindOp(catalog, spec.op());
  if (op == nullptr) {
    if (FindOp(MergeDistinctCatalogs(admitted.all), spec.op()) != nullptr)
      return absl::InvalidArgumentError(absl::StrCat("spec.op: op ", api::Quote(spec.op()),
                                                     " is on no worker matching spec.selector (",
                                                     DescribeSelector(spec.selector()), ")"));
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.op: unknown op ", api::Quote(spec.op()), " (known: ",
        api::CutText(absl::StrJoin(catalog, ", ", [](std::string* out, const v1::OpInfo& o) { out->append(o.name()); }),
                     1024),
        ")"));
  }
  // Memory is checked against the devices that could actually run the op.
  const auto memory = admitted.memory_by_op.find(op->name());
  const int64_t max_memory = memory == admitted.memory_by_op.end() ? 0 : memory->second;
  if (absl::Status s = api::ResolveAgainstOp(*op, max_memory, &spec); !s.ok()) return s;
  if (api::ExpandProblems(*op, spec).empty())
    return absl::InvalidArgumentError(
        absl::StrCat("spec.problems: the job selects no problem (op '", op->name(),
                     "' has no default preset, or no shape has a requested dtype); give a preset or a shape"));
  return absl::OkStatus();
}

absl::StatusOr<SubmitOutcome> Coordinator::InsertQueued(v1::JobSpec spec, absl::string_view idempotency_key) {
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
  if (inserted->inserted) NotifyQueued(inserted->job);
  return SubmitOutcome{inserted->job.job_id(), !inserted->inserted};
}

void Coordinator::set_queued_listener(QueuedListener listener) {
  absl::MutexLock lock(&listener_mu_);
  queued_listener_ = std::move(listener);
}

void Coordinator::NotifyQueued(const v1::Job& job) {
  absl::MutexLock lock(&listener_mu_);
  if (queued_listener_) queued_listener_(job);
}

absl::StatusOr<v1::Job> Coordinator::GetJob(absl::string_view job_id) {
  if (absl::Status s = CheckId("job_id", job_id); !s.ok()) return s;
  return store_->GetJob(job_id);
}

absl::StatusOr<std::vector<v1::Job>> Coordinator::ListJobs(int limit, v1::JobState state) {
  if (!v1::JobState_IsValid(state)) return absl::InvalidArgumentError(absl::StrCat("state: unknown value ", state));
  if (limit <= 0) limit = kDefaultListLimit;
  absl::StatusOr<std::vector<v1::Job>> jobs = store_->ListJobs(std::min(limit, kMaxListLimit), state);
  if (jobs.ok()) FitJobList(&*jobs, api::kMaxListResponseBytes);
  return jobs;
}

absl::StatusOr<v1::Job> Coordinator::CancelJob(absl::string_view job_id) {
  if (absl::Status s = CheckId("job_id", job_id); !s.ok()) return s;
  absl::StatusOr<Transition> t = store_->CancelJob(job_id, clock_->NowUnixMs());
  if (!t.ok()) return t.status();
  if (t->previous_state != v1::CANCELLED_JOB) ObserveFinished(t->job, t->previous_state == v1::RUNNING);
  return std::move(t->job);
}

absl::StatusOr<JobResults> Coordinator::GetResults(absl::string_view job_id, bool include_samples) {
  if (absl::Status s = CheckId("job_id", job_id); !s.ok()) return s;
  absl::StatusOr<v1::Job> job = store_->GetJob(job_id);
  if (!job.ok()) return job.status();
  absl::StatusOr<std::vector<v1::Result>> results = store_->GetResults(job_id, include_samples);
  if (!results.ok()) return results.status();
  JobResults out{*std::move(job), *std::move(results)};
  if (absl::Status s = FitResults(&out, api::kMaxListResponseBytes); !s.ok()) return s;
  return out;
}

std::string Coordinator::WorkerState(int64_t last_heartbeat_unix_ms, const std::string& state, int64_t now_ms) const {
  if (now_ms - last_heartbeat_unix_ms > config_.worker_lost_after.count()) return "lost";
  return state.empty() ? "idle" : state;
}

absl::StatusOr<std::vector<v1::WorkerStatus>> Coordinator::ListWorkers() {
  absl::StatusOr<std::vector<WorkerRecord>> workers = store_->ListWorkers();
  if (!workers.ok()) return workers.status();
  const int64_t now = clock_->NowUnixMs();
  std::vector<v1::WorkerStatus> out;
  std::vector<HealthInput> health_inputs;
  for (const WorkerRecord& w : *workers) {
    v1::WorkerStatus& s = out.emplace_back();
    s.set_state(WorkerState(w.last_heartbeat_unix_ms, w.state, now));
    s.set_last_heartbeat_unix_ms(w.last_heartbeat_unix_ms);
    s.set_current_job_id(w.current_job_id);
    health_inputs.push_back(HealthInput{&w.info, s.state() != "lost"});
  }
  const std::vector<WorkerHealth> health = AssessFleetHealth(health_inputs, config_.health_margin);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].set_unhealthy(health[i].unhealthy);
    out[i].set_health_reason(health[i].reason);
    *out[i].mutable_info() = std::move((*workers)[i].info);
  }
  FitWorkerList(&out, api::kMaxListResponseBytes);
  return out;
}

absl::StatusOr<std::vector<v1::OpInfo>> Coordinator::ListKernels(absl::string_view op) {
  absl::StatusOr<std::vector<WorkerRecord>> workers = store_->ListWorkers();
  if (!workers.ok()) return workers.status();
  std::vector<const v1::WorkerInfo*> infos;
  for (const WorkerRecord& w : *workers) infos.push_back(&w.info);
  std::vector<v1::OpInfo> catalog = MergeDistinctCatalogs(infos);
  if (op.empty()) {
    FitOpList(&catalog, api::kMaxListResponseBytes);
    return catalog;
  }
  if (absl::Status s = api::CheckSize("op", op, api::kMaxNameBytes); !s.ok()) return s;
  const v1::OpInfo* found = FindOp(catalog, op);
  if (found == nullptr)
    return absl::NotFoundError(absl::StrCat(
        "op ", api::Quote(op), " is on no registered worker (known: ",
        api::CutText(absl::StrJoin(catalog, ", ", [](std::string* out, const v1::OpInfo& o) { out->append(o.name()); }),
                     1024),
        ")"));
  return std::vector<v1::OpInfo>{*found};
}

absl::StatusOr<HistoryOutcome> Coordinator::GetHistory(HistoryQuery query) {
  if (query.op.empty()) return Required("op");
  for (auto [field, value, limit] : {std::tuple{"op", &query.op, api::kMaxNameBytes},
                                     {"variant", &query.variant, api::kMaxNameBytes},
                                     {"gpu_model", &query.gpu_model_substring, api::kMaxNameBytes},
                                     {"shape", &query.shape, api::kMaxShortTextBytes}})
    if (absl::Status s = api::CheckSize(field, *value, limit); !s.ok()) return s;
  if (!v1::Dtype_IsValid(query.dtype))
    return absl::InvalidArgumentError(absl::StrCat("dtype: unknown value ", query.dtype));
  if (!v1::CacheMode_IsValid(query.cache_mode))
    return absl::InvalidArgumentError(absl::StrCat("cache_mode: unknown value ", query.cache_mode));
  if (!v1::Backend_IsValid(query.backend))
    return absl::InvalidArgumentError(absl::StrCat("backend: unknown value ", query.backend));
  if (query.hot_batch < 0 || query.hot_batch > api::kMaxHotBatch)
    return absl::InvalidArgumentError(
        absl::StrCat("hot_batch: ", query.hot_batch, " is outside [0, ", api::kMaxHotBatch, "]"));
  if (query.limit <= 0) query.limit = kDefaultHistoryLimit;
  query.limit = std::min(query.limit, kMaxHistoryLimit);
  query.shape = SeriesShapeFor(query.op, query.shape);  // as submit takes it, as the series are keyed
  absl::StatusOr<std::vector<HistoryRow>> rows = store_->History(query);
  if (!rows.ok()) return rows.status();
  HistoryOutcome out;
  out.points = *std::move(rows);
  if (out.points.empty()) return out;
  absl::StatusOr<std::vector<v1::SeriesControl>> controls = store_->ListSeriesControls(query.op);
  if (!controls.ok()) return controls.status();
  // Each series' current baseline: its center (the newest series') and its run-to-run spread (all).
  std::map<SeriesKey, std::pair<double, int>> spreads;
  for (size_t i = 0; i < out.points.size(); ++i) {
    HistoryRow& row = out.points[i];
    const EffectiveControls ec = ControlsFor(*controls, row.series);
    row.muted = ec.muted;
    row.threshold_override = ec.threshold.value_or(0);
    auto it = spreads.find(row.series);
    if (it == spreads.end()) {
      absl::StatusOr<std::shared_ptr<const PooledBaseline>> baseline = Baseline(row.series, "", "", ec.step_after_ms);
      if (!baseline.ok()) return baseline.status();
      const api::RunJudgment j = api::JudgeRuns({}, (*baseline)->runs, config_.regression);
      it = spreads.emplace(row.series, std::pair{api::RunSpread((*baseline)->runs), j.baseline_runs}).first;
      if (i == 0) {
        out.baseline_median_ns = j.baseline_center_ns;
        out.baseline_results = (*baseline)->results;
      }
    }
    row.series_run_spread = it->second.first;
    row.series_baseline_runs = it->second.second;
  }
  return out;
}

absl::StatusOr<PooledBaseline> Coordinator::Reference(const SeriesKey& series, absl::string_view exclude_job_id,
                                                      absl::string_view also_exclude, int64_t after_ms) {
  PooledBaseline out;
  if (config_.regression.reference_results <= 0) return out;
  absl::StatusOr<std::vector<BaselineResult>> rows = store_->ReferenceResults(
      series, config_.baseline_branch, config_.regression.reference_results, exclude_job_id, after_ms);
  if (!rows.ok()) return rows.status();
  for (const BaselineResult& row : *rows)
    if (also_exclude.empty() || row.job_id != also_exclude) out.runs.push_back(api::RunObservation{row.median_ns, 0});
  out.results = static_cast<int>(out.runs.size());
  return out;
}

absl::StatusOr<std::shared_ptr<const PooledBaseline>> Coordinator::Baseline(const SeriesKey& series,
                                                                            absl::string_view exclude_job_id,
                                                                            absl::string_view also_exclude,
                                                                            int64_t after_ms) {
  const std::shared_ptr<const BaselineCache::Entry> previous = baselines_.Find(series);
  absl::StatusOr<std::vector<BaselineResult>> rows =
      store_->BaselineResults(series, config_.baseline_branch, config_.regression.baseline_results, exclude_job_id,
                              BaselineCache::Have(previous), after_ms);
  if (!rows.ok()) return rows.status();
  if (!also_exclude.empty())
    std::erase_if(*rows, [&](const BaselineResult& row) { return row.job_id == also_exclude; });
  return baselines_.Pool(series, *std::move(rows), previous);
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
  // A view read now (heartbeats are current), through the fleet view so that only registrations
  // that changed are parsed; it also serves the next second's submissions and leases.
  absl::StatusOr<FleetCache::View> view = fleet_.Get(store_, FleetCache::Want::kFresh);
  if (!view.ok()) return view.status();
  const std::vector<Fleet::Worker>& workers = view->fleet->workers();
  FleetSnapshot snap;
  snap.queued = (*counts)[v1::QUEUED];
  snap.running = (*counts)[v1::RUNNING];
  absl::StatusOr<std::vector<SeriesPoint>> series = store_->ListSeries();
  if (!series.ok()) return series.status();
  absl::StatusOr<std::vector<v1::SeriesControl>> controls = store_->ListSeriesControls("");
  if (!controls.ok()) return controls.status();
  const int64_t now = clock_->NowUnixMs();
  std::vector<HealthInput> health_inputs;
  for (const Fleet::Worker& w : workers) {
    const std::string state = WorkerState(w.last_heartbeat_unix_ms, w.state, now);
    ++snap.workers[{state, GpuModel(*w.info)}];
    health_inputs.push_back(HealthInput{w.info.get(), state != "lost"});
  }
  const std::vector<WorkerHealth> health = AssessFleetHealth(health_inputs, config_.health_margin);
  // Per (worker name, model): the lowest ceilings over its devices of that model. A name registered
  // twice (a worker restarted without its id) shows its live registration only: lost ones are left out.
  for (size_t i = 0; i < workers.size(); ++i) {
    if (!health_inputs[i].counts_for_median) continue;
    const v1::WorkerInfo& info = *workers[i].info;
    for (int d = 0; d < info.devices_size(); ++d) {
      const v1::DeviceInfo& device = info.devices(d);
      WorkerCeilingsGauge& g = snap.worker_ceilings[{info.name(), device.name()}];
      const v1::Calibration* cal = CalibrationOf(info, d);
      if (cal != nullptr) {
        auto lowest = [](double* into, double value) {
          if (value > 0 && (*into <= 0 || value < *into)) *into = value;
        };
        lowest(&g.copy_bytes_per_second, cal->copy_bytes_per_second());
        for (const auto& [dtype, flops] : cal->peak_flops_per_second()) lowest(&g.peak_flops_per_second[dtype], flops);
      }
      g.unhealthy = g.unhealthy || health[i].device_unhealthy[d];
    }
  }
  for (const SeriesPoint& p : *series) {
    SeriesGauge& g = snap.series[SeriesLabels{p.series.gpu_model, p.series.op, p.series.variant,
                                              SeriesLabel(p.series), api::DtypeName(p.series.dtype)}];
    g.median_seconds = p.median_ns * 1e-9;
    g.utilization = p.utilization;
    // A muted series keeps its verdict but raises no alert.
    g.regression = Alerts(p.verdict, ControlsFor(*controls, p.series));
  }
  observer_->Snapshot(snap);
  return absl::OkStatus();
}

}  // namespace kbench::server
