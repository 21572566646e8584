// LeaseJob, long poll included: a call whose worker finds nothing to run waits (LeaseWaiters) up to
// its wait_ms for a job it can run, holding no thread; the answer says how long it was held.
#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/channel.h"
#include "api/limits.h"
#include "server/service/coordinator_service.h"

namespace kbench::server {

// The call's reactor: it lives until gRPC is done with the call, and tells the waiters when the
// caller cancels (a cancelled call is never granted a job it would not receive).
class CoordinatorService::LeaseCall final : public grpc::ServerUnaryReactor {
 public:
  LeaseCall(CoordinatorService* service, Context* context, const v1::LeaseJobRequest* req, v1::LeaseJobResponse* resp,
            std::optional<RequestGate::Pass> pass)
      : service_(service),
        context_(context),
        req_(req),
        resp_(resp),
        arrived_(absl::Now()),
        pass_(std::move(pass)) {}

  void OnCancel() override {
    cancelled_.store(true);
    service_->waiters_.Cancel(this);
  }
  void OnDone() override { delete this; }

  CoordinatorService* service_;
  Context* context_;
  const v1::LeaseJobRequest* req_;
  v1::LeaseJobResponse* resp_;
  const absl::Time arrived_;
  absl::Time deadline_;
  bool held_ = false;                  // Parked at least once.
  std::atomic<bool> cancelled_{false};
  std::optional<RequestGate::Pass> pass_;  // Held until the call is done: the drain waits for it.

  int64_t HeldMs() const { return held_ ? absl::ToInt64Milliseconds(absl::Now() - arrived_) : 0; }
  // The wait ran out (or there was none): with a wait, it was held for it even when the first
  // attempt alone outlasted it (a loaded store), so the worker asks again at once, not after a backoff.
  void FinishNotGranted() {
    resp_->Clear();
    if (req_->wait_ms() > 0)
      resp_->set_held_ms(std::max<int64_t>(1, absl::ToInt64Milliseconds(absl::Now() - arrived_)));
    Finish(grpc::Status::OK);
  }
};

namespace {

grpc::Status Closing() { return grpc::Status(grpc::StatusCode::UNAVAILABLE, "coordinator is shutting down; retry"); }
grpc::Status CallerCancelled() { return grpc::Status(grpc::StatusCode::CANCELLED, "the caller cancelled the lease"); }

}  // namespace

CoordinatorService::Reactor* CoordinatorService::LeaseJob(Context* context, const v1::LeaseJobRequest* req,
                                                          v1::LeaseJobResponse* resp) {
  std::optional<RequestGate::Pass> pass = Enter();
  const bool refused = pass.has_value() && !*pass;
  auto* call = new LeaseCall(this, context, req, resp, std::move(pass));
  if (refused) {
    call->Finish(Closing());
    return call;
  }
  if (req->wait_ms() < 0 || req->wait_ms() > api::kMaxLeaseWaitMs) {
    call->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              absl::StrCat("wait_ms: ", req->wait_ms(), " is outside 0..", api::kMaxLeaseWaitMs)));
    return call;
  }
  call->deadline_ = call->arrived_ + absl::Milliseconds(req->wait_ms());
  pool_.Run([this, call] { TryLease(call); });
  return call;
}

void CoordinatorService::TryLease(LeaseCall* call) {
  for (;;) {
    if (call->cancelled_.load()) return call->Finish(CallerCancelled());
    const uint64_t seen = waiters_.epoch();
    absl::StatusOr<LeaseOutcome> r = coordinator_->LeaseJob(call->req_->worker_id(), call->req_->device_uuid());
    if (!r.ok()) return call->Finish(api::ToGrpc(r.status()));
    if (r->granted) {
      v1::LeaseJobResponse* resp = call->resp_;
      resp->set_granted(true);
      *resp->mutable_job() = std::move(r->job);
      resp->set_lease_id(r->lease_id);
      resp->set_lease_expires_unix_ms(r->lease_expires_unix_ms);
      resp->set_held_ms(call->HeldMs());
      return call->Finish(grpc::Status::OK);
    }
    if (absl::Now() >= call->deadline_) return call->FinishNotGranted();
    LeaseWaiters::Waiter w{
        .key = call,
        .worker = std::move(r->matched_as),
        .deadline = call->deadline_,
        .cancelled = &call->cancelled_,
        .resume =
            [this, call](LeaseWaiters::Wake why, std::shared_ptr<const v1::JobSpec> queued) {
              switch (why) {
                case LeaseWaiters::Wake::kJobQueued:
                  return pool_.Run([this, call, queued = std::move(queued)] {
                    // Cancelled since it was woken: the job goes to the next waiter instead.
                    if (call->cancelled_.load()) {
                      waiters_.JobQueued(*queued);
                      return call->Finish(CallerCancelled());
                    }
                    TryLease(call);
                  });
                case LeaseWaiters::Wake::kTimedOut:
                  return call->FinishNotGranted();
                case LeaseWaiters::Wake::kCancelled:
                  return call->Finish(CallerCancelled());
                case LeaseWaiters::Wake::kClosed:
                  return call->Finish(Closing());
              }
            },
    };
    call->held_ = true;
    switch (waiters_.Park(&w, seen)) {
      case LeaseWaiters::Parked::kYes:
        return;
      case LeaseWaiters::Parked::kRetry:
        continue;
      case LeaseWaiters::Parked::kCancelled:
        return call->Finish(CallerCancelled());
      case LeaseWaiters::Parked::kClosed:
        return call->Finish(Closing());
    }
  }
}

}  // namespace kbench::server
