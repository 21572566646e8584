// The agent's life against a fake Coordinator (agent_fixture.h): a coordinator that comes up late
// and restarts empty; draining (the running job finishes, no other is leased); stopping.
#include "agent_fixture.h"

namespace kbench::worker {
namespace {

using testing::AgentTest;
using testing::PrivateSocketAddress;
using testing::Served;
using testing::TinySpec;
using namespace std::chrono_literals;

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

// The race behind a third registration: a heartbeat under the old registration is answered NOT_FOUND
// only after the lease loop has registered the same id again; that late answer must not undo it.
TEST_F(AgentTest, ALateNotFoundOfAnOlderRegistrationDoesNotRegisterAgain) {
  const std::string address = PrivateSocketAddress();
  auto agent = StartAgent(address);
  {
    Served first(address);
    ASSERT_NE(first.server, nullptr);
    ASSERT_TRUE(first.fake.WaitUntil([&] { return first.fake.heartbeats >= 2; }));
  }
  Served second(address);
  second.fake.late_not_found = true;
  ASSERT_NE(second.server, nullptr);
  ASSERT_TRUE(second.fake.WaitUntil([&] { return second.fake.not_found_heartbeats >= 1; }));
  // Later heartbeats under the new registration are answered OK: nothing is left to register.
  ASSERT_TRUE(second.fake.WaitUntil([&] { return second.fake.heartbeats >= second.fake.not_found_heartbeats + 3; }));
  second.fake.Enqueue("job-2", TinySpec({"cpu_good"}));
  ASSERT_TRUE(second.fake.WaitUntil([&] { return !second.fake.completions.empty(); }));
  agent->Stop();
  std::lock_guard<std::mutex> lock(second.fake.mu);
  EXPECT_EQ(second.fake.requested_ids, std::vector<std::string>{"w-1"});
  std::lock_guard<std::mutex> registered(mu_);
  EXPECT_EQ(registered_, (std::vector<std::string>{"w-1", "w-1"}));
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
