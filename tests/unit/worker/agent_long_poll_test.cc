// The agent's long poll (AgentConfig::lease_wait) against a fake coordinator that holds lease calls:
// the call carries the wait, the device stays free for a direct job meanwhile and the direct job ends
// the poll, Drain() ends it too, and a grant that comes while a direct job holds the device waits
// for the device instead of being dropped.
#include "agent_fixture.h"

namespace kbench::worker {
namespace {

using testing::AgentTest;
using testing::Served;
using testing::TinySpec;
using namespace std::chrono_literals;

TEST_F(AgentTest, ALongPollLeavesTheDeviceToADirectJobWhichEndsThePoll) {
  Served c;
  c.fake.hold_polls = true;
  auto agent = StartAgent("127.0.0.1:" + std::to_string(c.bound), 10ms, 5s, 30s);
  ASSERT_TRUE(c.fake.WaitUntil([&] { return c.fake.held_now == 1; }));
  {
    std::lock_guard<std::mutex> lock(c.fake.mu);
    EXPECT_EQ(c.fake.last_wait_ms, 30'000);
  }
  // What a direct RunJob does: the device is free during the poll, and taking it ends the poll.
  absl::StatusOr<std::unique_ptr<DeviceLease>> direct = node_.TryAcquireDevice();
  ASSERT_TRUE(direct.ok()) << direct.status();
  ASSERT_TRUE(c.fake.WaitUntil([&] { return c.fake.held_cancelled == 1 && c.fake.held_now == 0; }));
  direct->reset();
  // Leasing goes on once the device is free again.
  c.fake.Enqueue("job-1", TinySpec({"cpu_good"}));
  ASSERT_TRUE(c.fake.WaitUntil([&] { return !c.fake.completions.empty(); }));
  agent->Stop();
  std::lock_guard<std::mutex> lock(c.fake.mu);
  EXPECT_FALSE(c.fake.completions[0].failed());
  ASSERT_EQ(c.fake.results.size(), 1u);
  EXPECT_EQ(c.fake.results[0].status(), v1::OK);
}

TEST_F(AgentTest, DrainEndsAHeldPoll) {
  Served c;
  c.fake.hold_polls = true;
  auto agent = StartAgent("127.0.0.1:" + std::to_string(c.bound), 10ms, 5s, 30s);
  ASSERT_TRUE(c.fake.WaitUntil([&] { return c.fake.held_now == 1; }));
  agent->Drain();
  ASSERT_TRUE(agent->WaitDrained());
  // The fake notices a cancelled call a moment after the agent does.
  EXPECT_TRUE(c.fake.WaitUntil([&] { return c.fake.held_cancelled == 1; }))
      << "the poll ran out its wait instead of ending with the drain";
  std::lock_guard<std::mutex> lock(c.fake.mu);
  EXPECT_TRUE(c.fake.completions.empty());
}

TEST_F(AgentTest, AGrantWhileADirectJobHoldsTheDeviceRunsOnceTheDeviceIsFree) {
  Served c;
  c.fake.hold_polls = true;
  bool direct_done = false;  // Guarded by c.fake.mu.
  auto fake = std::make_unique<testing::FakeBackend>();
  fake->on_measure = [&](size_t) {
    std::lock_guard<std::mutex> lock(c.fake.mu);
    EXPECT_TRUE(direct_done) << "the leased job ran while the direct job held the device";
  };
  WorkerNode node(WorkerConfig{.name = "crossing"}, std::move(fake), testing::TestRegistry());
  AgentConfig config;
  config.coordinator.address = "127.0.0.1:" + std::to_string(c.bound);
  config.retry_initial = config.idle_initial = 10ms;
  config.retry_max = config.idle_max = 50ms;
  config.lease_wait = 30s;
  Agent agent(config, node);
  agent.Start();
  ASSERT_TRUE(c.fake.WaitUntil([&] { return c.fake.held_now == 1; }));
  // The race the hook cannot close: a direct job takes the device just as the poll is granted.
  node.set_on_direct_acquire(nullptr);
  absl::StatusOr<std::unique_ptr<DeviceLease>> direct = node.TryAcquireDevice();
  ASSERT_TRUE(direct.ok()) << direct.status();
  c.fake.Enqueue("job-1", TinySpec({"cpu_good"}));
  ASSERT_TRUE(c.fake.WaitUntil([&] { return c.fake.leases.size() == 1; }));  // Granted to the held call.
  {
    std::lock_guard<std::mutex> lock(c.fake.mu);
    direct_done = true;
  }
  direct->reset();
  ASSERT_TRUE(c.fake.WaitUntil([&] { return !c.fake.completions.empty(); }));
  agent.Stop();
  std::lock_guard<std::mutex> lock(c.fake.mu);
  EXPECT_FALSE(c.fake.completions[0].failed());
  ASSERT_EQ(c.fake.results.size(), 1u);
  EXPECT_EQ(c.fake.results[0].status(), v1::OK);
}

}  // namespace
}  // namespace kbench::worker
