// The agent's jobs against a fake Coordinator on loopback (agent_fixture.h): lease, report, complete;
// a job that is invalid for this worker; a cancellation; reports that fail or are refused; the
// lease kept alive during a long item.
#include "agent_fixture.h"

namespace kbench::worker {
namespace {

using testing::AgentTest;
using testing::PrivateSocketAddress;
using testing::Served;
using testing::TinySpec;
using namespace std::chrono_literals;

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

}  // namespace
}  // namespace kbench::worker
