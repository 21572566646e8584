// The agent against a fake Coordinator on loopback: register, lease, report, complete; a job that is
// invalid for this worker; a cancellation; a coordinator that comes up late and restarts empty.
#include "worker/agent.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>

#include "fake_backend.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "test_ops.h"
#include "worker/cpu/cpu_backend.h"

namespace kbench::worker {
namespace {

using namespace std::chrono_literals;

// An in-memory coordinator. Every handler notifies `cv` after changing state, and tests wait on
// conditions over that state.
class FakeCoordinator final : public v1::Coordinator::Service {
 public:
  grpc::Status RegisterWorker(grpc::ServerContext*, const v1::RegisterWorkerRequest* req,
                              v1::RegisterWorkerResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    requested_ids.push_back(req->info().worker_id());
    // Keeps an id the worker asks for, as the real one does.
    const std::string id = req->info().worker_id().empty() ? "w-" + std::to_string(++next_id) : req->info().worker_id();
    workers.insert(id);
    last_info = req->info();
    resp->set_worker_id(id);
    resp->set_heartbeat_interval_ms(20);
    cv.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* req, v1::HeartbeatResponse*) override {
    std::lock_guard<std::mutex> lock(mu);
    ++heartbeats;
    cv.notify_all();
    if (!workers.contains(req->worker_id())) return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown worker");
    return grpc::Status::OK;
  }
  grpc::Status LeaseJob(grpc::ServerContext*, const v1::LeaseJobRequest* req, v1::LeaseJobResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    ++lease_calls;
    cv.notify_all();
    if (!workers.contains(req->worker_id())) return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown worker");
    if (queue.empty()) return grpc::Status::OK;
    v1::Job job = queue.front();
    queue.pop_front();
    job.set_attempts(job.attempts() + 1);
    job.set_worker_id(req->worker_id());
    resp->set_granted(true);
    *resp->mutable_job() = job;
    resp->set_lease_id("lease-" + job.job_id());
    resp->set_lease_expires_unix_ms(LeaseExpiry());
    leases.insert(resp->lease_id());
    cv.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status ReportProgress(grpc::ServerContext*, const v1::ReportProgressRequest* req,
                              v1::ReportProgressResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu);
    if (!leases.contains(req->lease_id())) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no lease");
    if (failing_reports > 0) {
      --failing_reports;
      cv.notify_all();
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "coordinator restarting");
    }
    if (refuse_results && req->results_size() > 0)
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "results[0].index: 999 is past the job's 1 results");
    progress.push_back(req->progress());
    for (const auto& r : req->results()) results.push_back(r);
    resp->set_cancelled(cancel_jobs);
    resp->set_lease_expires_unix_ms(LeaseExpiry());
    cv.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status CompleteJob(grpc::ServerContext*, const v1::CompleteJobRequest* req, v1::CompleteJobResponse*) override {
    std::lock_guard<std::mutex> lock(mu);
    if (!leases.contains(req->lease_id())) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no lease");
    leases.erase(req->lease_id());
    completions.push_back(*req);
    cv.notify_all();
    return grpc::Status::OK;
  }

  void Enqueue(const std::string& id, const v1::JobSpec& spec) {
    std::lock_guard<std::mutex> lock(mu);
    v1::Job job;
    job.set_job_id(id);
    *job.mutable_spec() = spec;
    queue.push_back(job);
  }
  int64_t LeaseExpiry() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               (std::chrono::system_clock::now() + lease_ttl).time_since_epoch())
        .count();
  }
  template <class Pred>
  bool WaitUntil(Pred pred) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, 20s, pred);
  }

  std::mutex mu;
  std::condition_variable cv;
  int next_id = 0;
  int heartbeats = 0;
  int lease_calls = 0;
  bool cancel_jobs = false;
  int failing_reports = 0;  // The next reports fail with UNAVAILABLE.
  bool refuse_results = false;  // Reports that carry results fail with INVALID_ARGUMENT.
  std::chrono::milliseconds lease_ttl{30'000};
  std::vector<std::string> requested_ids;
  std::set<std::string> workers, leases;
  v1::WorkerInfo last_info;
  std::deque<v1::Job> queue;
  std::vector<v1::Progress> progress;
  std::vector<v1::Result> results;
  std::vector<v1::CompleteJobRequest> completions;
};

// A unix socket address in a fresh private folder: nothing listens there until a test serves it, and
// no other process can take it meanwhile (as one could a TCP port freed for a later bind).
std::string PrivateSocketAddress() {
  char dir[] = "/tmp/kbench-agent-test.XXXXXX";
  if (mkdtemp(dir) == nullptr) return "unix:/nonexistent/kbench-agent-test.sock";
  return std::string("unix:") + dir + "/coordinator.sock";
}

// A fake coordinator served on 127.0.0.1 at a port it picks, or at `address`.
struct Served {
  explicit Served(const std::string& address = "127.0.0.1:0") {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound);
    builder.RegisterService(&fake);
    server = builder.BuildAndStart();
  }
  ~Served() { server->Shutdown(std::chrono::system_clock::now()); }
  FakeCoordinator fake;
  std::unique_ptr<grpc::Server> server;
  int bound = 0;
};

v1::JobSpec TinySpec(std::vector<std::string> variants) {
  v1::JobSpec spec;
  spec.set_op("scale");
  for (auto& v : variants) spec.add_variants(v);
  spec.add_dtypes(v1::DTYPE_F32);
  *spec.mutable_settings() = testing::TinySettings();
  return spec;
}

class AgentTest : public ::testing::Test {
 protected:
  AgentTest()
      : node_(WorkerConfig{.name = "agent-test"}, std::make_unique<CpuBackend>(CpuBackendOptions{}, testing::TestHost()),
              testing::TestRegistry()) {}

  std::unique_ptr<Agent> StartAgent(int port) { return StartAgent("127.0.0.1:" + std::to_string(port)); }
  std::unique_ptr<Agent> StartAgent(const std::string& address, std::chrono::milliseconds retry = 10ms,
                                    std::chrono::milliseconds rpc_timeout = 5s) {
    AgentConfig config;
    config.coordinator.address = address;
    config.retry_initial = config.idle_initial = retry;
    config.retry_max = config.idle_max = std::max(retry, std::chrono::milliseconds(50));
    config.rpc_timeout = rpc_timeout;
    config.on_registered = [this](const std::string& id) {
      std::lock_guard<std::mutex> lock(mu_);
      registered_.push_back(id);
    };
    auto agent = std::make_unique<Agent>(config, node_);
    agent->Start();
    return agent;
  }

  WorkerNode node_;
  std::mutex mu_;
  std::vector<std::string> registered_;
};

TEST_F(AgentTest, RunsALeasedJobReportsEveryResultAndCompletes) {
  Served c;
  c.fake.Enqueue("job-1", TinySpec({"cpu_good", "cpu_wrong"}));
  auto agent = StartAgent(c.bound);
  ASSERT_TRUE(c.fake.WaitUntil([&] { return !c.fake.completions.empty(); }));
  agent->Stop();
  std::lock_guard<std::mutex> lock(c.fake.mu);
  EXPECT_EQ(c.fake.last_info.name(), "agent-test");
  EXPECT_EQ(c.fake.last_info.catalog_size(), 1);
  EXPECT_FALSE(c.fake.completions[0].failed());
  EXPECT_EQ(c.fake.completions[0].lease_id(), "lease-job-1");
  ASSERT_EQ(c.fake.results.size(), 2u);
  EXPECT_EQ(c.fake.results[0].index(), 0);
  EXPECT_EQ(c.fake.results[0].status(), v1::OK);
  EXPECT_EQ(c.fake.results[0].job_id(), "job-1");
  EXPECT_EQ(c.fake.results[0].worker_id(), "w-1");
  EXPECT_EQ(c.fake.results[0].attempt(), 1);
  EXPECT_EQ(c.fake.results[1].status(), v1::INCORRECT);
  EXPECT_EQ(c.fake.progress.back().results_done(), 2);
  EXPECT_EQ(c.fake.progress.back().results_total(), 2);
  EXPECT_EQ(node_.worker_id(), "w-1");
  std::lock_guard<std::mutex> registered(mu_);
  EXPECT_EQ(registered_, std::vector<std::string>{"w-1"});
}

TEST_F(AgentTest, AJobInvalidForThisWorkerCompletesAsFailed) {
  Served c;
  c.fake.Enqueue("job-bad", TinySpec({"cpu_nope"}));
  auto agent = StartAgent(c.bound);
  ASSERT_TRUE(c.fake.WaitUntil([&] { return !c.fake.completions.empty(); }));
  agent->Stop();
  std::lock_guard<std::mutex> lock(c.fake.mu);
  EXPECT_TRUE(c.fake.completions[0].failed());
  EXPECT_NE(c.fake.completions[0].error().find("spec.variants[0]"), std::string::npos);
  EXPECT_TRUE(c.fake.results.empty());
}

TEST_F(AgentTest, CancelledByTheCoordinatorStopsTheJob) {
  Served c;
  c.fake.cancel_jobs = true;
  v1::JobSpec spec = TinySpec({"cpu_good"});
  spec.add_problems()->set_preset("edge");
  spec.add_problems()->set_preset("small");
  c.fake.Enqueue("job-c", spec);
  auto agent = StartAgent(c.bound);
  ASSERT_TRUE(c.fake.WaitUntil([&] { return !c.fake.completions.empty(); }));
  agent->Stop();
  std::lock_guard<std::mutex> lock(c.fake.mu);
  EXPECT_FALSE(c.fake.completions[0].failed());
  ASSERT_EQ(c.fake.results.size(), 3u);
  // The first report (before item 0) already said cancelled: nothing was measured.
  for (const auto& r : c.fake.results) EXPECT_EQ(r.status(), v1::CANCELLED);
}

TEST_F(AgentTest, WaitsForTheCoordinatorAndRegistersAgainAfterItRestartsEmpty) {
  const std::string address = PrivateSocketAddress();  // nothing listens there when the agent starts
  auto agent = StartAgent(address);
  {
    Served first(address);
    ASSERT_NE(first.server, nullptr);
    ASSERT_TRUE(first.fake.WaitUntil([&] { return first.fake.requested_ids.size() == 1; }));
    EXPECT_EQ(first.fake.requested_ids[0], "");
    ASSERT_TRUE(first.fake.WaitUntil([&] { return first.fake.heartbeats >= 2; }));
  }
  // A new coordinator on a new database: it does not know w-1, so the heartbeat or the lease gets
  // NOT_FOUND and the agent registers again, asking to keep its id.
  Served second(address);
  ASSERT_NE(second.server, nullptr);
  ASSERT_TRUE(second.fake.WaitUntil([&] { return !second.fake.requested_ids.empty(); }));
  EXPECT_EQ(second.fake.requested_ids[0], "w-1");
  second.fake.Enqueue("job-2", TinySpec({"cpu_good"}));
  ASSERT_TRUE(second.fake.WaitUntil([&] { return !second.fake.completions.empty(); }));
  agent->Stop();
  std::lock_guard<std::mutex> lock(second.fake.mu);
  ASSERT_EQ(second.fake.results.size(), 1u);
  EXPECT_EQ(second.fake.results[0].status(), v1::OK);
  std::lock_guard<std::mutex> registered(mu_);
  EXPECT_EQ(registered_, (std::vector<std::string>{"w-1", "w-1"}));
}

TEST_F(AgentTest, ResultsThatCouldNotBeReportedAreSentAgain) {
  Served c;
  c.fake.failing_reports = 3;  // The progress report and the first two result reports fail.
  v1::JobSpec spec = TinySpec({"cpu_good", "cpu_f32", "cpu_small"});
  c.fake.Enqueue("job-r", spec);
  auto agent = StartAgent(c.bound);
  ASSERT_TRUE(c.fake.WaitUntil([&] { return !c.fake.completions.empty(); }));
  agent->Stop();
  std::lock_guard<std::mutex> lock(c.fake.mu);
  ASSERT_EQ(c.fake.results.size(), 3u);  // Each exactly once, in order.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.fake.results[i].index(), i);
  EXPECT_FALSE(c.fake.completions[0].failed());
}

// A report the coordinator refuses as invalid would be refused again forever: the job stops and
// completes as failed, with the coordinator's reason.
TEST_F(AgentTest, AReportRefusedAsInvalidFailsTheJobInsteadOfRetryingForever) {
  Served c;
  c.fake.refuse_results = true;
  c.fake.Enqueue("job-x", TinySpec({"cpu_good", "cpu_f32"}));
  auto agent = StartAgent(c.bound);
  ASSERT_TRUE(c.fake.WaitUntil([&] { return !c.fake.completions.empty(); }));
  agent->Stop();
  std::lock_guard<std::mutex> lock(c.fake.mu);
  ASSERT_EQ(c.fake.completions.size(), 1u);
  EXPECT_TRUE(c.fake.completions[0].failed());
  EXPECT_NE(c.fake.completions[0].error().find("refused this worker's report: results[0].index"), std::string::npos)
      << c.fake.completions[0].error();
  EXPECT_TRUE(c.fake.results.empty());
}

TEST_F(AgentTest, KeepsTheLeaseAliveDuringALongItem) {
  Served c;
  c.fake.lease_ttl = 600ms;  // Keep-alive reports every ~200 ms.
  auto fake = std::make_unique<testing::FakeBackend>();
  // The only item "runs" until the coordinator has seen two reports beyond the one before it.
  fake->on_measure = [&](size_t) {
    EXPECT_TRUE(c.fake.WaitUntil([&] { return c.fake.progress.size() >= 3; }));
  };
  WorkerNode node(WorkerConfig{.name = "slow"}, std::move(fake), testing::TestRegistry());
  AgentConfig config;
  config.coordinator.address = "127.0.0.1:" + std::to_string(c.bound);
  config.retry_initial = config.idle_initial = 10ms;
  Agent agent(config, node);
  v1::JobSpec spec = TinySpec({"cpu_good"});
  c.fake.Enqueue("job-long", spec);
  agent.Start();
  ASSERT_TRUE(c.fake.WaitUntil([&] { return !c.fake.completions.empty(); }));
  agent.Stop();
  std::lock_guard<std::mutex> lock(c.fake.mu);
  // Keep-alives carry progress only; the result came once, after them.
  ASSERT_EQ(c.fake.results.size(), 1u);
  EXPECT_GE(c.fake.progress.size(), 4u);
  EXPECT_EQ(c.fake.progress[1].current(), "scale cpu_good 64 f32");
  EXPECT_EQ(c.fake.progress[1].results_done(), 0);
}

TEST_F(AgentTest, ADrainedAgentFinishesItsJobAndLeasesNoOther) {
  Served c;
  bool measuring = false, release = false;  // Guarded by c.fake.mu.
  auto fake = std::make_unique<testing::FakeBackend>();
  // The job's only item runs until the test has drained the agent.
  fake->on_measure = [&](size_t) {
    {
      std::lock_guard<std::mutex> lock(c.fake.mu);
      measuring = true;
    }
    c.fake.cv.notify_all();
    EXPECT_TRUE(c.fake.WaitUntil([&] { return release; }));
  };
  WorkerNode node(WorkerConfig{.name = "draining"}, std::move(fake), testing::TestRegistry());
  AgentConfig config;
  config.coordinator.address = "127.0.0.1:" + std::to_string(c.bound);
  config.retry_initial = config.idle_initial = 10ms;
  config.retry_max = config.idle_max = 50ms;
  Agent agent(config, node);
  c.fake.Enqueue("job-1", TinySpec({"cpu_good"}));
  c.fake.Enqueue("job-2", TinySpec({"cpu_good"}));
  agent.Start();
  ASSERT_TRUE(c.fake.WaitUntil([&] { return measuring; }));
  agent.Drain();
  {
    std::lock_guard<std::mutex> lock(c.fake.mu);
    EXPECT_TRUE(c.fake.completions.empty());  // Drain() does not wait, nor cancel.
    release = true;
  }
  c.fake.cv.notify_all();
  ASSERT_TRUE(agent.WaitDrained());
  {
    std::lock_guard<std::mutex> lock(c.fake.mu);
    // The running job was reported and completed as usual, not abandoned.
    ASSERT_EQ(c.fake.completions.size(), 1u);
    EXPECT_EQ(c.fake.completions[0].lease_id(), "lease-job-1");
    EXPECT_FALSE(c.fake.completions[0].failed());
    ASSERT_EQ(c.fake.results.size(), 1u);
    EXPECT_EQ(c.fake.results[0].status(), v1::OK);
    EXPECT_EQ(c.fake.lease_calls, 1);  // The one that granted job-1.
  }
  // Heartbeats go on (every 20 ms) while the agent runs; leases do not.
  int heartbeats = 0;
  {
    std::lock_guard<std::mutex> lock(c.fake.mu);
    heartbeats = c.fake.heartbeats;
  }
  ASSERT_TRUE(c.fake.WaitUntil([&] { return c.fake.heartbeats >= heartbeats + 3; }));
  agent.Stop();
  std::lock_guard<std::mutex> lock(c.fake.mu);
  EXPECT_EQ(c.fake.lease_calls, 1);
  ASSERT_EQ(c.fake.queue.size(), 1u);
  EXPECT_EQ(c.fake.queue.front().job_id(), "job-2");
}

TEST_F(AgentTest, DrainingAnIdleAgentEndsItsLeaseLoopAtOnce) {
  Served c;
  auto agent = StartAgent(c.bound);
  ASSERT_TRUE(c.fake.WaitUntil([&] { return c.fake.lease_calls >= 2; }));  // Polling an empty queue.
  agent->Drain();
  ASSERT_TRUE(agent->WaitDrained());
  int leases = 0, heartbeats = 0;
  {
    std::lock_guard<std::mutex> lock(c.fake.mu);
    leases = c.fake.lease_calls;
    heartbeats = c.fake.heartbeats;
  }
  c.fake.Enqueue("job-late", TinySpec({"cpu_good"}));
  ASSERT_TRUE(c.fake.WaitUntil([&] { return c.fake.heartbeats >= heartbeats + 3; }));
  agent->Stop();
  std::lock_guard<std::mutex> lock(c.fake.mu);
  EXPECT_EQ(c.fake.lease_calls, leases);
  EXPECT_EQ(c.fake.queue.size(), 1u);
  EXPECT_TRUE(c.fake.completions.empty());
}

TEST_F(AgentTest, WaitDrainedReturnsFalseWhenStoppedInstead) {
  Served c;
  auto agent = StartAgent(c.bound);
  std::thread stopper([&] { agent->Stop(); });
  EXPECT_FALSE(agent->WaitDrained());
  stopper.join();
}

TEST_F(AgentTest, StopIsPromptWhileTheCoordinatorIsUnreachable) {
  // Back-off and RPC time limit of 120 s: a Stop that waited for either would take that long, so the
  // bound below holds on any host, however loaded, and fails only when Stop does not interrupt them.
  auto agent = StartAgent(PrivateSocketAddress(), 120s, 120s);
  const auto start = std::chrono::steady_clock::now();
  agent->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 60s);
  EXPECT_TRUE(agent->worker_id().empty());
}

}  // namespace
}  // namespace kbench::worker
