// The worker-facing half of the Coordinator: registration, heartbeats, leases, completion and the
// requeue of expired leases. The client-facing half (submit, jobs, results, history, fleet views) is
// coordinator.cc; reports are coordinator_report.cc.
#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/bounds.h"
#include "api/limits.h"
#include "api/message_bounds.h"
#include "api/quote.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/ids.h"
#include "server/coordinator/matching.h"

namespace kbench::server {
namespace {

// Seconds from milliseconds, for the observer's histograms.
double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

// An id a caller sends: required, and short enough to be looked up (and echoed in an error).
absl::Status CheckId(absl::string_view field, absl::string_view id) {
  return api::CheckRequired(field, id, api::kMaxIdBytes);
}

// True when the worker has this device alone (and no other device's calibration): narrowing it to
// that device (WithOnlyDevice) would copy its whole registration to change nothing.
bool OnlyDevice(const v1::WorkerInfo& info, absl::string_view device_uuid) {
  if (info.devices_size() != 1 || info.devices(0).uuid() != device_uuid) return false;
  return std::all_of(info.calibrations().begin(), info.calibrations().end(),
                     [&](const v1::Calibration& c) { return c.device_uuid() == device_uuid; });
}

}  // namespace

absl::StatusOr<RegisterOutcome> Coordinator::RegisterWorker(v1::WorkerInfo info) {
  if (absl::Status s = api::CheckWorkerInfoBounds("info", info); !s.ok()) return s;
  bool keep_id = false;
  if (!info.worker_id().empty()) {
    absl::StatusOr<WorkerRecord> known = store_->GetWorker(info.worker_id());
    if (known.ok()) keep_id = true;
    else if (!absl::IsNotFound(known.status())) return known.status();
  }
  // An id the coordinator does not know (say, from before its database was replaced) is not taken
  // over: ids are the coordinator's to assign.
  if (!keep_id) info.set_worker_id(RandomId("w", 12));
  absl::Status upserted = store_->UpsertWorker(info, clock_->NowUnixMs());
  fleet_.Invalidate(info.worker_id());  // Even on an error: the store may have taken it.
  if (!upserted.ok()) return upserted;
  return RegisterOutcome{info.worker_id(), config_.heartbeat_interval.count()};
}

absl::StatusOr<std::vector<std::string>> Coordinator::Heartbeat(absl::string_view worker_id) {
  if (absl::Status s = CheckId("worker_id", worker_id); !s.ok()) return s;
  return store_->Heartbeat(worker_id, clock_->NowUnixMs());
}

absl::StatusOr<LeaseOutcome> Coordinator::LeaseJob(absl::string_view worker_id, absl::string_view device_uuid) {
  if (absl::Status s = CheckId("worker_id", worker_id); !s.ok()) return s;
  if (absl::Status s = api::CheckSize("device_uuid", device_uuid, api::kMaxIdBytes); !s.ok()) return s;
  // Its registration from the fleet view when it is there (fleet_cache.h): a thousand idle workers
  // polling would otherwise each read and parse their own catalog every time. A device the cached
  // registration lacks is looked for in the store before it is refused.
  std::shared_ptr<const Fleet> fleet;
  const v1::WorkerInfo* registered = nullptr;
  if (absl::StatusOr<FleetCache::View> view = fleet_.Get(store_, FleetCache::Want::kAny); view.ok()) {
    fleet = view->fleet;
    if (!view->changed->count(std::string(worker_id))) registered = fleet->Find(worker_id);
  }
  std::optional<v1::WorkerInfo> narrowed;  // The one device asked for.
  if (registered != nullptr && !device_uuid.empty() && !OnlyDevice(*registered, device_uuid)) {
    if (absl::StatusOr<v1::WorkerInfo> one = WithOnlyDevice(*registered, device_uuid); one.ok()) narrowed = *std::move(one);
    else registered = nullptr;
  }
  absl::StatusOr<WorkerRecord> stored = absl::NotFoundError("");
  if (registered == nullptr) {
    stored = store_->GetWorker(worker_id);
    if (!stored.ok()) return stored.status();
    registered = &stored->info;
    if (!device_uuid.empty() && !OnlyDevice(*registered, device_uuid)) {
      absl::StatusOr<v1::WorkerInfo> one = WithOnlyDevice(*registered, device_uuid);
      if (!one.ok()) return one.status();
      narrowed = *std::move(one);
    }
  }
  // Expired leases first, so that their jobs are back in the queue for this very request; at most
  // every lease_requeue_interval (see CoordinatorConfig).
  const int64_t now = clock_->NowUnixMs();
  int64_t last = last_lease_requeue_ms_.load();
  if ((last == std::numeric_limits<int64_t>::min() || now - last >= config_.lease_requeue_interval.count() ||
       now < last) &&
      last_lease_requeue_ms_.compare_exchange_strong(last, now)) {
    if (absl::StatusOr<std::vector<Transition>> r = RequeueExpired(); !r.ok()) return r.status();
  }
  const v1::WorkerInfo& info = narrowed.has_value() ? *narrowed : *registered;
  absl::StatusOr<std::optional<Lease>> lease = store_->LeaseNextJob(
      worker_id, [&info](const v1::JobSpec& spec) { return WorkerCanRun(info, spec); }, now,
      config_.lease_ttl.count(), RandomId("l", 16));
  if (!lease.ok()) return lease.status();
  if (!lease->has_value()) {
    LeaseOutcome none;
    if (narrowed.has_value()) none.matched_as = std::make_shared<const v1::WorkerInfo>(*std::move(narrowed));
    else if (stored.ok()) none.matched_as = std::make_shared<const v1::WorkerInfo>(std::move(stored->info));
    else none.matched_as = std::shared_ptr<const v1::WorkerInfo>(fleet, registered);  // Shares the view's.
    return none;
  }
  Lease& l = **lease;
  // Queue wait is measured for first attempts only: a retry's wait would start at its requeue, which
  // the job does not record.
  if (observer_ != nullptr && l.job.attempts() == 1)
    observer_->JobLeased(Seconds(std::max<int64_t>(0, now - l.job.created_unix_ms())));
  return LeaseOutcome{true, std::move(l.job), std::move(l.lease_id), l.expires_unix_ms};
}

absl::StatusOr<v1::Job> Coordinator::CompleteJob(absl::string_view lease_id, bool failed, absl::string_view error) {
  if (absl::Status s = CheckId("lease_id", lease_id); !s.ok()) return s;
  // A failure's reason is kept even when too long: cut, not refused (a refused completion would leave
  // the job running until its lease expired).
  absl::StatusOr<Transition> t =
      store_->CompleteJob(lease_id, clock_->NowUnixMs(), failed, api::CutText(error, api::kMaxLogBytes));
  if (!t.ok()) return t.status();
  // A cancelled job was counted when it was cancelled.
  if (t->previous_state != v1::CANCELLED_JOB) ObserveFinished(t->job, /*ran=*/true);
  return std::move(t->job);
}

absl::StatusOr<std::vector<Transition>> Coordinator::RequeueExpired() {
  absl::StatusOr<std::vector<Transition>> changed = store_->RequeueExpired(clock_->NowUnixMs(), config_.max_attempts);
  if (!changed.ok()) return changed;
  for (const Transition& t : *changed) {
    if (t.job.state() == v1::QUEUED) NotifyQueued(t.job);
    if (observer_ == nullptr) continue;
    if (t.job.state() == v1::QUEUED) observer_->JobRequeued();
    else if (t.job.state() == v1::FAILED) ObserveFinished(t.job, /*ran=*/true);
  }
  return changed;
}

}  // namespace kbench::server
