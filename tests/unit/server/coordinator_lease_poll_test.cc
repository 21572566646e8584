// LeaseJob's long poll over gRPC: a held call is granted the job queued during its wait (submitted,
// or back from an expired lease), an empty wait ends "not granted" with its hold, and a cancelled or
// shut-down wait never takes a job.
#include <chrono>
#include <thread>

#include "absl/time/clock.h"
#include "api/limits.h"
#include "service_fixture.h"

namespace kbench::server {
namespace {

using testing::CoordinatorServiceTest;

class LeasePollTest : public CoordinatorServiceTest {
 protected:
  std::string Register(const std::string& name) {
    v1::RegisterWorkerRequest reg;
    *reg.mutable_info() = testing::CpuWorker(name);
    v1::RegisterWorkerResponse registered;
    EXPECT_TRUE(stub_->RegisterWorker(api::MakeContext(options_).get(), reg, &registered).ok());
    return registered.worker_id();
  }
  std::string Submit() {
    v1::SubmitRequest submit;
    *submit.mutable_spec() = testing::RmsnormSpec(8, 16);
    v1::SubmitResponse submitted;
    grpc::Status s = stub_->Submit(api::MakeContext(options_).get(), submit, &submitted);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return submitted.job_id();
  }
  // Waits (events, not a timing verdict) until `n` lease calls are parked.
  bool ParkedBecomes(size_t n) {
    const absl::Time give_up = absl::Now() + absl::Seconds(60);
    while (service_->parked_leases() != n)
      if (absl::Now() > give_up) return false;
      else absl::SleepFor(absl::Milliseconds(2));
    return true;
  }

  // A LeaseJob call on its own thread.
  struct Held {
    std::unique_ptr<grpc::ClientContext> ctx;
    v1::LeaseJobRequest req;
    v1::LeaseJobResponse resp;
    grpc::Status status;
    std::thread thread;
    void Join() { thread.join(); }
  };
  std::unique_ptr<Held> Hold(const std::string& worker_id, int wait_ms) {
    auto h = std::make_unique<Held>();
    h->ctx = api::MakeContext(options_, std::chrono::milliseconds(wait_ms) + std::chrono::seconds(60));
    h->req.set_worker_id(worker_id);
    h->req.set_wait_ms(wait_ms);
    Held* p = h.get();
    h->thread = std::thread([this, p] { p->status = stub_->LeaseJob(p->ctx.get(), p->req, &p->resp); });
    return h;
  }
};

TEST_F(LeasePollTest, AHeldCallIsGrantedTheJobSubmittedDuringItsWait) {
  const std::string worker = Register("cpu");
  std::unique_ptr<Held> held = Hold(worker, 30'000);
  ASSERT_TRUE(ParkedBecomes(1));
  const std::string job = Submit();
  held->Join();
  ASSERT_TRUE(held->status.ok()) << held->status.error_message();
  ASSERT_TRUE(held->resp.granted());
  EXPECT_EQ(held->resp.job().job_id(), job);
  EXPECT_FALSE(held->resp.lease_id().empty());
  EXPECT_GE(held->resp.held_ms(), 0);
  EXPECT_EQ(service_->parked_leases(), 0u);
}

TEST_F(LeasePollTest, AnEmptyWaitEndsNotGrantedSayingHowLongItWasHeld) {
  const std::string worker = Register("cpu");
  std::unique_ptr<Held> held = Hold(worker, 50);
  held->Join();
  ASSERT_TRUE(held->status.ok()) << held->status.error_message();
  EXPECT_FALSE(held->resp.granted());
  EXPECT_GE(held->resp.held_ms(), 50);  // A lower bound: the wait is not cut short.
  // Without a wait: answered at once, held 0.
  std::unique_ptr<Held> at_once = Hold(worker, 0);
  at_once->Join();
  ASSERT_TRUE(at_once->status.ok());
  EXPECT_FALSE(at_once->resp.granted());
  EXPECT_EQ(at_once->resp.held_ms(), 0);
}

TEST_F(LeasePollTest, AWaitOutsideItsRangeIsRefusedNamingTheField) {
  const std::string worker = Register("cpu");
  for (int wait : {-1, api::kMaxLeaseWaitMs + 1}) {
    v1::LeaseJobRequest req;
    req.set_worker_id(worker);
    req.set_wait_ms(wait);
    v1::LeaseJobResponse resp;
    grpc::Status s = stub_->LeaseJob(api::MakeContext(options_).get(), req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << wait;
    EXPECT_EQ(s.error_message(), "wait_ms: " + std::to_string(wait) + " is outside 0..30000");
  }
}

TEST_F(LeasePollTest, ACancelledWaitTakesNoJob) {
  const std::string worker = Register("cpu");
  std::unique_ptr<Held> held = Hold(worker, 30'000);
  ASSERT_TRUE(ParkedBecomes(1));
  held->ctx->TryCancel();
  held->Join();
  EXPECT_EQ(held->status.error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_TRUE(ParkedBecomes(0));  // The server heard of it, too.
  const std::string job = Submit();
  std::unique_ptr<Held> next = Hold(worker, 0);
  next->Join();
  ASSERT_TRUE(next->status.ok());
  ASSERT_TRUE(next->resp.granted()) << "the job went to the cancelled call";
  EXPECT_EQ(next->resp.job().job_id(), job);
}

TEST_F(LeasePollTest, StopWaitingAnswersHeldCallsUnavailableAndLaterOnesAtOnce) {
  const std::string worker = Register("cpu");
  std::unique_ptr<Held> held = Hold(worker, 30'000);
  ASSERT_TRUE(ParkedBecomes(1));
  service_->StopWaiting();
  held->Join();
  EXPECT_EQ(held->status.error_code(), grpc::StatusCode::UNAVAILABLE);
  std::unique_ptr<Held> later = Hold(worker, 30'000);
  later->Join();
  EXPECT_EQ(later->status.error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(LeasePollTest, AJobBackFromAnExpiredLeaseWakesAHeldCall) {
  const std::string a = Register("a");
  const std::string b = Register("b");
  const std::string job = Submit();
  std::unique_ptr<Held> first = Hold(a, 0);
  first->Join();
  ASSERT_TRUE(first->resp.granted());
  std::unique_ptr<Held> held = Hold(b, 30'000);
  ASSERT_TRUE(ParkedBecomes(1));
  clock_.AdvanceMs(coordinator_->config().lease_ttl.count() + 1);
  ASSERT_TRUE(coordinator_->RequeueExpired().ok());  // What the reaper does.
  held->Join();
  ASSERT_TRUE(held->status.ok()) << held->status.error_message();
  ASSERT_TRUE(held->resp.granted());
  EXPECT_EQ(held->resp.job().job_id(), job);
  EXPECT_EQ(held->resp.job().attempts(), 2);
}

TEST_F(LeasePollTest, AJobQueuedByAnotherCoordinatorOnTheSameDatabaseWakesAHeldCall) {
  const std::string worker = Register("cpu");
  // A second coordinator on the same store, as a replica on the same PostgreSQL database: this
  // service never hears of what it queues but through the queue watch.
  Coordinator replica(CoordinatorConfig{}, store_.get(), &clock_);
  std::unique_ptr<Held> held = Hold(worker, 30'000);
  ASSERT_TRUE(ParkedBecomes(1));
  absl::StatusOr<SubmitOutcome> submitted = replica.Submit(testing::RmsnormSpec(8, 16), "");
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  held->Join();
  ASSERT_TRUE(held->status.ok()) << held->status.error_message();
  ASSERT_TRUE(held->resp.granted()) << "held for its whole wait: the replica's job was not seen";
  EXPECT_EQ(held->resp.job().job_id(), submitted->job_id);
}

}  // namespace
}  // namespace kbench::server
