// Two real kbench-coordinator processes on one PostgreSQL database (a server this test starts): fake
// workers register and submit through both, then lease from both at once until the queue is empty.
// Every job must be leased exactly once, and each replica must see what the other did.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/channel.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "postgres_fixture.h"
#include "process.h"

namespace kbench::e2e {
namespace {

constexpr int kJobs = 300;
constexpr int kWorkersPerReplica = 4;

struct Replica {
  std::unique_ptr<Process> process;
  api::ChannelOptions options;
  std::unique_ptr<v1::Coordinator::Stub> stub;
};

class PostgresReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<server::testing::PostgresServer*> pg = server::testing::SharedPostgres();
    ASSERT_TRUE(pg.ok()) << pg.status();
    absl::StatusOr<std::string> uri = (*pg)->CreateDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    dir_ = ::testing::TempDir();
    for (int i = 0; i < 2; ++i) {
      Replica& r = replicas_[i];
      r.process = std::make_unique<Process>(
          std::vector<std::string>{KBENCH_COORDINATOR_BIN, "--listen=127.0.0.1:0", "--db=" + *uri,
                                   "--metrics-listen=", "--db-pool-size=4"},
          absl::StrCat(dir_, "/pg_replica_", ::getpid(), "_", i, ".log"));
      std::optional<std::string> address = r.process->WaitForLine("listening on", std::chrono::seconds(60));
      ASSERT_TRUE(address.has_value()) << "replica " << i << " did not start:\n" << r.process->Log();
      r.options.address = *address;
      r.stub = v1::Coordinator::NewStub(api::MakeChannel(r.options));
    }
  }

  void TearDown() override {
    for (Replica& r : replicas_) {
      if (r.process == nullptr) continue;
      r.process->Signal(SIGTERM);
      EXPECT_EQ(r.process->Wait(), 0) << r.process->Log();
    }
  }

  std::unique_ptr<grpc::ClientContext> Context(int replica) { return api::MakeContext(replicas_[replica].options); }

  std::string dir_;
  Replica replicas_[2];
};

TEST_F(PostgresReplicasTest, ConcurrentLeasesThroughBothReplicasTakeEveryJobOnce) {
  // Fake workers, registered half on each replica.
  std::vector<std::pair<int, std::string>> workers;  // (replica, worker id)
  for (int i = 0; i < 2 * kWorkersPerReplica; ++i) {
    const int replica = i % 2;
    v1::RegisterWorkerRequest req;
    *req.mutable_info() = server::testing::CpuWorker(absl::StrCat("fake-", i));
    v1::RegisterWorkerResponse resp;
    grpc::Status s = replicas_[replica].stub->RegisterWorker(Context(replica).get(), req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    workers.emplace_back(replica, resp.worker_id());
  }

  // Jobs submitted through both; a retried submission through the other replica is deduplicated.
  std::set<std::string> submitted;
  for (int i = 0; i < kJobs; ++i) {
    v1::SubmitRequest req;
    *req.mutable_spec() = server::testing::RmsnormSpec();
    req.set_idempotency_key(absl::StrCat("job-", i));
    v1::SubmitResponse resp;
    grpc::Status s = replicas_[i % 2].stub->Submit(Context(i % 2).get(), req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    submitted.insert(resp.job_id());
    if (i % 50 == 0) {
      v1::SubmitResponse again;
      ASSERT_TRUE(replicas_[1 - i % 2].stub->Submit(Context(1 - i % 2).get(), req, &again).ok());
      EXPECT_TRUE(again.deduplicated());
      EXPECT_EQ(again.job_id(), resp.job_id());
    }
  }
  ASSERT_EQ(submitted.size(), static_cast<size_t>(kJobs));

  // Every worker leases through its replica, all at once, until nothing is granted.
  absl::Mutex mu;
  std::map<std::string, std::vector<std::string>> leases;  // job id -> lease ids
  std::map<std::string, int> lease_replica;                 // lease id -> replica that granted it
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  // Every worker starts leasing at once: none takes the whole queue while the others are still being
  // started (a loaded host can start threads far apart).
  std::latch start(static_cast<std::ptrdiff_t>(workers.size()));
  for (const auto& [replica, worker] : workers) {
    threads.emplace_back([&, replica = replica, worker = worker] {
      start.arrive_and_wait();
      while (true) {
        v1::LeaseJobRequest req;
        req.set_worker_id(worker);
        v1::LeaseJobResponse resp;
        grpc::Status s = replicas_[replica].stub->LeaseJob(Context(replica).get(), req, &resp);
        if (!s.ok()) {
          ++errors;
          ADD_FAILURE() << "LeaseJob: " << s.error_message();
          return;
        }
        if (!resp.granted()) return;
        absl::MutexLock lock(&mu);
        leases[resp.job().job_id()].push_back(resp.lease_id());
        lease_replica[resp.lease_id()] = replica;
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(errors.load(), 0);

  size_t leased_twice = 0;
  for (const auto& [job, ids] : leases) leased_twice += ids.size() > 1;
  EXPECT_EQ(leased_twice, 0u) << "jobs leased more than once";
  EXPECT_EQ(leases.size(), static_cast<size_t>(kJobs)) << "jobs never leased";
  for (const std::string& id : submitted) EXPECT_EQ(leases.count(id), 1u) << id;
  int granted_by[2] = {0, 0};
  for (const auto& [lease, replica] : lease_replica) ++granted_by[replica];
  EXPECT_GT(granted_by[0], 0);  // Both replicas took part.
  EXPECT_GT(granted_by[1], 0);

  // The queue is empty as either replica sees it; each lease completes through the other replica.
  for (int replica = 0; replica < 2; ++replica) {
    v1::ListJobsRequest req;
    req.set_limit(1000);
    req.set_state(v1::QUEUED);
    v1::ListJobsResponse resp;
    ASSERT_TRUE(replicas_[replica].stub->ListJobs(Context(replica).get(), req, &resp).ok());
    EXPECT_EQ(resp.jobs_size(), 0) << "replica " << replica;
  }
  for (const auto& [job, ids] : leases) {
    const int other = 1 - lease_replica[ids.front()];
    v1::CompleteJobRequest req;
    req.set_lease_id(ids.front());
    v1::CompleteJobResponse resp;
    grpc::Status s = replicas_[other].stub->CompleteJob(Context(other).get(), req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.job().state(), v1::SUCCEEDED);
  }
  v1::ListJobsRequest done_req;
  done_req.set_limit(1000);
  done_req.set_state(v1::SUCCEEDED);
  v1::ListJobsResponse done;
  ASSERT_TRUE(replicas_[0].stub->ListJobs(Context(0).get(), done_req, &done).ok());
  EXPECT_EQ(done.jobs_size(), kJobs);
}

}  // namespace
}  // namespace kbench::e2e
