// The coordinator's handling of a worker's reports: checked field by field and against the job,
// judged against each result's baseline, then stored in one write. See coordinator.h.
#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/bounds.h"
#include "api/limits.h"
#include "api/message_bounds.h"
#include "api/plugin_spec.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/coordinator_report_check.h"
#include "server/store/result_columns.h"

namespace kbench::server {
namespace {

absl::Status CheckId(absl::string_view field, absl::string_view id) {
  return api::CheckRequired(field, id, api::kMaxIdBytes);
}

std::string LabelOf(const v1::JobSpec& spec, const std::string& name) {
  auto it = spec.labels().find(name);
  return it == spec.labels().end() ? std::string() : it->second;
}

}  // namespace

absl::StatusOr<ProgressOutcome> Coordinator::ReportProgress(absl::string_view lease_id, const v1::Progress* progress,
                                                            const std::vector<v1::Result>& results) {
  if (absl::Status s = CheckId("lease_id", lease_id); !s.ok()) return s;
  if (absl::Status s = api::CheckCount("results", static_cast<int64_t>(results.size()), api::kMaxResultsPerReport);
      !s.ok())
    return s;
  if (progress != nullptr)
    if (absl::Status s = api::CheckProgressBounds("progress", *progress); !s.ok()) return s;
  for (size_t i = 0; i < results.size(); ++i)
    if (absl::Status s = api::CheckResultBounds(api::At("results", static_cast<int>(i)), results[i]); !s.ok()) return s;
  const int64_t now = clock_->NowUnixMs();
  // The report is checked against its job (reads) before the one write that stores it.
  absl::StatusOr<v1::Job> job = store_->GetLeasedJob(lease_id, now);
  if (!job.ok()) return job.status();
  const bool unnamed = std::any_of(results.begin(), results.end(),
                                   [](const v1::Result& r) { return r.device().name().empty(); });
  std::shared_ptr<const v1::WorkerInfo> worker;
  if (unnamed || !api::NeedsPluginPlanning(job->spec())) {
    absl::StatusOr<std::shared_ptr<const v1::WorkerInfo>> w = LeasingWorker(*job);
    if (!w.ok()) return w.status();
    worker = *std::move(w);
  }
  const JobResultShape shape = ResultShapeOf(job->spec(), worker.get());
  if (absl::Status s = CheckReportAgainstJob(*job, shape, progress, results); !s.ok()) return s;

  std::optional<v1::Progress> cut_progress;
  if (progress != nullptr && progress->current().size() > api::kMaxTextBytes) {
    cut_progress = *progress;
    api::CutProgressText(&*cut_progress);
    progress = &*cut_progress;
  }
  if (results.empty()) {
    absl::StatusOr<Lease> lease = store_->ExtendLease(lease_id, now, config_.lease_ttl.count(), progress);
    if (!lease.ok()) return lease.status();
    return ProgressOutcome{lease->expires_unix_ms, lease->job.state() == v1::CANCELLED_JOB};
  }
  // Copied only when a result needs its device filled in or its text cut: results carry samples.
  const bool long_text = std::any_of(results.begin(), results.end(), [](const v1::Result& r) {
    return r.status_message().size() > api::kMaxLogBytes || r.custom().compile_log().size() > api::kMaxLogBytes;
  });
  std::vector<v1::Result> copied;
  if (unnamed || long_text) {
    copied = results;
    for (v1::Result& r : copied) {
      api::CutResultText(&r);
      // Results that name no device get the leasing worker's first device, so that they join a series.
      if (r.device().name().empty() && worker && !worker->devices().empty())
        *r.mutable_device() = worker->devices(0);
    }
  }
  const std::vector<v1::Result>& stored = copied.empty() ? results : copied;
  std::vector<size_t> to_confirm;
  absl::StatusOr<std::vector<ResultVerdict>> verdicts = JudgeResults(*job, stored, &to_confirm);
  if (!verdicts.ok()) return verdicts.status();
  absl::StatusOr<ReportOutcome> report =
      store_->AppendResults(lease_id, now, config_.lease_ttl.count(), progress, stored, *verdicts);
  if (!report.ok()) return report.status();
  if (absl::Status s = EnqueueConfirmations(*job, stored, to_confirm); !s.ok()) return s;
  if (observer_ != nullptr)
    for (const v1::Result& r : results)
      if (std::find(report->added.begin(), report->added.end(), r.index()) != report->added.end())
        observer_->ResultStored(r.status());
  return ProgressOutcome{report->lease.expires_unix_ms, report->lease.job.state() == v1::CANCELLED_JOB};
}

absl::StatusOr<std::shared_ptr<const v1::WorkerInfo>> Coordinator::LeasingWorker(const v1::Job& job) {
  // From the fleet view, as LeaseJob takes it (fleet_cache.h): a report a second per running job
  // would otherwise read and parse its worker's registration each time.
  if (absl::StatusOr<FleetCache::View> view = fleet_.Get(store_, FleetCache::Want::kAny);
      view.ok() && !view->changed->count(job.worker_id())) {
    if (const Fleet::Worker* known = view->fleet->FindWorker(job.worker_id()); known != nullptr) return known->info;
  }
  absl::StatusOr<WorkerRecord> worker = store_->GetWorker(job.worker_id());
  if (absl::IsNotFound(worker.status())) return nullptr;
  if (!worker.ok()) return worker.status();
  return std::make_shared<const v1::WorkerInfo>(std::move(worker->info));
}

absl::StatusOr<std::vector<ResultVerdict>> Coordinator::JudgeResults(const v1::Job& job,
                                                                      const std::vector<v1::Result>& results,
                                                                      std::vector<size_t>* to_confirm) {
  const bool on_baseline_branch = LabelOf(job.spec(), "branch") == config_.baseline_branch;
  // A confirming re-run: the results of the job it confirms, to pair by series.
  const std::string confirms = LabelOf(job.spec(), kConfirmsLabel);
  std::vector<v1::Result> originals;
  if (!confirms.empty()) {
    absl::StatusOr<std::vector<v1::Result>> got = store_->GetResults(confirms, /*include_samples=*/false);
    if (got.ok()) originals = *std::move(got);
    else if (!absl::IsNotFound(got.status())) return got.status();
  }
  // The admin controls (threshold overrides, mutes, steps): a few rows, read once per report.
  absl::StatusOr<std::vector<v1::SeriesControl>> controls = store_->ListSeriesControls("");
  if (!controls.ok()) return controls.status();
  std::vector<ResultVerdict> verdicts(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const v1::Result& r = results[i];
    // A plugin's variant is not the series of the suite's variant of that name: no verdict against it.
    if (r.status() != v1::OK || !r.plugin_sha256().empty()) continue;
    const SeriesKey series = SeriesOf(r);
    const EffectiveControls ec = ControlsFor(*controls, series);
    const RegressionConfig rule = ForSeries(config_.regression, ec);
    // A known step restarts both the baseline and the pinned reference after it.
    absl::StatusOr<std::shared_ptr<const PooledBaseline>> baseline =
        Baseline(series, job.job_id(), confirms, ec.step_after_ms);
    if (!baseline.ok()) return baseline.status();
    absl::StatusOr<PooledBaseline> reference = Reference(series, job.job_id(), confirms, ec.step_after_ms);
    if (!reference.ok()) return reference.status();
    const api::RunObservation run = RunOf(r);
    const int samples = r.timing().samples_ns().empty() ? -1 : r.timing().samples_ns_size();
    RegressionAnalysis a =
        AnalyzeRuns(std::span<const api::RunObservation>(&run, 1), samples, **baseline, &*reference, rule);
    // Only preset problems become gauges: their shapes are a bounded set, explicit shapes are not.
    bool tracked = on_baseline_branch && !r.problem().preset().empty();
    const auto original = std::find_if(originals.begin(), originals.end(), [&](const v1::Result& o) {
      return o.status() == v1::OK && SeriesOf(o) == series;
    });
    if (original != originals.end()) {
      // The re-run's verdict is the confirmation: both runs together against the baseline.
      a = ConfirmRuns(RunOf(*original), run, samples, **baseline, &*reference, rule);
    } else if (confirms.empty() && config_.confirm_regressions && !ec.muted && NeedsConfirmation(a, rule)) {
      // A muted series is not alerted on, so its SLOWER needs no confirming re-run.
      to_confirm->push_back(i);
      tracked = false;  // The gauge (and its alert) waits for the re-run.
    }
    verdicts[i] = ResultVerdict{a.verdict, a.change_fraction, a.p_value, a.baseline_median_ns, tracked};
  }
  return verdicts;
}

absl::Status Coordinator::EnqueueConfirmations(const v1::Job& job, const std::vector<v1::Result>& results,
                                               const std::vector<size_t>& to_confirm) {
  for (size_t i : to_confirm) {
    const v1::Result& r = results[i];
    v1::JobSpec spec = job.spec();
    spec.clear_variants();
    spec.add_variants(r.variant());
    spec.clear_problems();
    spec.clear_dtypes();
    // The preset when the result came from one (so that the re-run is tracked like the original),
    // else the very shape.
    if (!r.problem().preset().empty()) {
      spec.add_problems()->set_preset(r.problem().preset());
      spec.add_dtypes(r.problem().dtype());
    } else {
      *spec.add_problems()->mutable_shape() = r.problem();
    }
    // On the same GPU model and backend: a re-run elsewhere would be another series.
    if (r.device().backend() != v1::BACKEND_UNSPECIFIED) spec.mutable_selector()->set_backend(r.device().backend());
    if (!r.device().name().empty() && r.device().name().size() <= api::kMaxNameBytes)
      spec.mutable_selector()->set_model(r.device().name());
    (*spec.mutable_labels())[kConfirmsLabel] = job.job_id();
    // The idempotency key makes a result reported twice enqueue one re-run.
    absl::StatusOr<SubmitOutcome> queued =
        InsertQueued(std::move(spec), absl::StrCat("confirm:", job.job_id(), ":", r.index()));
    if (!queued.ok()) return queued.status();
  }
  return absl::OkStatus();
}

}  // namespace kbench::server
