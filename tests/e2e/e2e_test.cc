// End to end: the real coordinator, CPU workers and client on loopback (port 0), SQLite in a temp dir.
#include <signal.h>

#include <map>
#include <set>
#include <stdlib.h>
#include <string>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/channel.h"
#include "cluster.h"
#include "gtest/gtest.h"

namespace kbench::e2e {
namespace {

using std::chrono::seconds;

v1::ListJobsResponse ListJobs(Cluster& c) {
  v1::ListJobsRequest req;
  req.set_limit(100);
  v1::ListJobsResponse resp;
  auto ctx = api::MakeContext({c.address(), ""});
  EXPECT_TRUE(c.stub().ListJobs(ctx.get(), req, &resp).ok());
  return resp;
}

TEST(EndToEnd, ResultsAreCorrectAndMatchTheCostModel) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker("a");
  const std::string id = c.Submit({"--op", "rmsnorm", "--shape", "rows=64,cols=1000", "--dtype", "bf16,f32",
                                          "--max-time-ms", "300", "--label", "branch=main"});
  ASSERT_FALSE(id.empty());
  v1::Job job = c.WaitForJob(id, JobFinished, seconds(120));
  ASSERT_EQ(job.state(), v1::SUCCEEDED) << job.DebugString();
  auto res = c.Results(id);
  ASSERT_EQ(res.results_size(), 4);  // rmsnorm's 2 CPU variants x 2 dtypes, each exactly once
  ASSERT_EQ(job.progress().results_total(), 4);
  std::set<int> indices;
  for (const auto& r : res.results()) {
    SCOPED_TRACE(r.variant() + " " + r.problem().DebugString());
    indices.insert(r.index());
    ASSERT_EQ(r.status(), v1::OK) << r.status_message();
    EXPECT_TRUE(r.correctness().passed());
    EXPECT_GE(r.correctness().trials(), 1);
    EXPECT_EQ(r.labels().at("branch"), "main");
    const auto& t = r.timing();
    EXPECT_GE(t.count(), 10);
    EXPECT_EQ(t.samples_ns_size(), t.count());
    EXPECT_GT(t.median_ns(), 0);
    EXPECT_LE(t.min_ns(), t.median_ns());
    EXPECT_LE(t.median_ns(), t.max_ns());
    const double s = r.problem().dtype() == v1::DTYPE_BF16 ? 2 : 4;
    // Cost model: x read once, weight read once, out written once.
    EXPECT_DOUBLE_EQ(r.roofline().bytes(), (2.0 * 64 * 1000 + 1000) * s);
    EXPECT_NEAR(r.roofline().achieved_bytes_per_second(), r.roofline().bytes() / (t.median_ns() * 1e-9),
                1e-6 * r.roofline().achieved_bytes_per_second());
    ASSERT_GE(r.roofline().ceilings_size(), 1);
    EXPECT_EQ(r.roofline().ceilings(0).source(), "calibrated");
    EXPECT_GT(r.roofline().ceilings(0).bandwidth_bytes_per_second(), 0);
    EXPECT_NE(r.roofline().bound_class(), v1::BOUND_CLASS_UNSPECIFIED);
    EXPECT_EQ(r.worker_id(), c.worker_id(0));
  }
  EXPECT_EQ(indices.size(), static_cast<size_t>(res.results_size()));

  auto csv = c.Client({"results", id, "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<std::string> lines = absl::StrSplit(absl::StripTrailingAsciiWhitespace(csv.out), '\n');
  EXPECT_EQ(lines.size(), static_cast<size_t>(res.results_size()) + 1);

  // The waiting submit prints the table and exits 0 when everything is correct.
  auto waited = c.Client({"submit", "--op", "vector_add", "--preset", "small", "--dtype", "f32", "--max-time-ms", "200",
                          "--wait"});
  ASSERT_EQ(waited.exit_code, 0) << waited.err << waited.out;
  EXPECT_NE(waited.out.find("vector_add"), std::string::npos) << waited.out;
  EXPECT_NE(waited.out.find("cpu_naive"), std::string::npos) << waited.out;
}

TEST(EndToEnd, BadInputIsRejectedNamingTheFieldAndNothingIsStored) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker("a");
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{"--op", "nope"}, "unknown op 'nope'"},
      {{"--op", "rmsnorm", "--variant", "bogus"}, "spec.variants[0]"},
      {{"--op", "rmsnorm", "--dtype", "int7"}, "int7"},
      {{"--op", "rmsnorm", "--shape", "abc"}, "malformed shape"},
      {{"--op", "rmsnorm", "--shape", "rows=4,cols=0"}, "(cols): must be >= 1, got 0"},
      {{"--op", "rmsnorm", "--shape", "rows=-5,cols=4"}, "must be >= 0"},
      {{"--op", "rmsnorm", "--shape", "rows=4,cols=4,depth=2"}, "spec.problems[0].shape"},
      {{"--op", "rmsnorm", "--shape", "99999999999999999999x4"}, "malformed shape"},
      {{"--op", "gemm", "--shape", "M=200000,N=200000,K=2"}, "needs"},
      {{"--op", "gemm", "--shape", "M=2000000000,N=2000000000,K=2"}, "overflows"},
      {{"--op", "gemm", "--shape", "M=4000000000,N=2,K=2"}, "must be <="},
      {{"--op", "rmsnorm", "--preset", "gigantic"}, "spec.problems[0].preset"},
  };
  for (const auto& tc : cases) {
    std::vector<std::string> args = {"submit"};
    args.insert(args.end(), tc.args.begin(), tc.args.end());
    auto r = c.Client(args);
    EXPECT_EQ(r.exit_code, 2) << tc.args.back() << "\n" << r.err;
    EXPECT_NE((r.err + r.out).find(tc.expect), std::string::npos)
        << "expected '" << tc.expect << "' in: " << r.err << r.out;
  }
  EXPECT_EQ(ListJobs(c).jobs_size(), 0);
}

// A shape may leave out the dims an op derives from the others, set to 0 the dims it allows to be 0,
// and name the op's flags; the results carry the whole shape, as a preset's do.
TEST(EndToEnd, ShapesLeaveOutDerivedDimsGiveZeroWhereTheOpAllowsItAndNameFlags) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker("a");
  auto kernels = c.Client({"kernels", "--op", "w4a16_gemm"});
  ASSERT_EQ(kernels.exit_code, 0) << kernels.err;
  EXPECT_NE(kernels.out.find("w4a16_gemm: K_words = K / 8, groups = cdiv(K, 128)"), std::string::npos) << kernels.out;
  struct Case {
    std::vector<std::string> args;
    std::vector<int64_t> resolved;
    std::vector<std::string> flags;
  };
  const std::vector<Case> cases = {
      {{"--op", "w4a16_gemm", "--shape", "M=3,N=256,K=200", "--variant", "cpu_naive"}, {3, 256, 200, 25, 2}, {}},
      // batch, H, H_kv, d, page, context, long_context = 0; the pool and the table derived.
      {{"--op", "paged_decode", "--shape", "2x4x4x128x16x40x0", "--variant", "cpu_plain"},
       {2, 4, 4, 128, 16, 40, 0, 6, 3},
       {}},
      // And an op's flag after the dims.
      {{"--op", "rope", "--shape", "64x4x2x128,gptj", "--variant", "cpu_naive"}, {64, 4, 2, 128}, {"gptj"}},
  };
  for (const Case& tc : cases) {
    std::vector<std::string> args = tc.args;
    args.insert(args.end(), {"--dtype", "bf16", "--max-time-ms", "200"});
    const std::string id = c.Submit(args);
    ASSERT_FALSE(id.empty()) << tc.args[1];
    v1::Job job = c.WaitForJob(id, JobFinished, seconds(120));
    ASSERT_EQ(job.state(), v1::SUCCEEDED) << job.DebugString();
    auto res = c.Results(id);
    ASSERT_EQ(res.results_size(), 1) << tc.args[1];
    const v1::Result& r = res.results(0);
    EXPECT_EQ(r.status(), v1::OK) << r.status_message();
    std::vector<int64_t> dims;
    for (const v1::Dim& d : r.problem().dims()) dims.push_back(d.value());
    EXPECT_EQ(dims, tc.resolved) << r.problem().DebugString();
    EXPECT_EQ(std::vector<std::string>(r.problem().flags().begin(), r.problem().flags().end()), tc.flags);
    // History finds the result by the shape as it was submitted (the series keeps every dim).
    auto history = c.Client({"history", "--op", tc.args[1], "--shape", tc.args[3]});
    ASSERT_EQ(history.exit_code, 0) << tc.args[3] << ": " << history.err;
    EXPECT_NE(history.out.find(id), std::string::npos) << tc.args[3] << ": " << history.out;
  }
}

TEST(EndToEnd, KilledWorkerLosesTheLeaseAndAnotherWorkerCompletesTheJob) {
  Cluster c;
  // Long enough that a live worker's keep-alive (a third of it) never misses on a loaded host.
  c.StartCoordinator({"--lease-ttl-ms", "6000"});
  c.StartWorker("a");
  // Four results of at least 1.5 s each: long enough to kill the worker in the middle.
  const std::string id = c.Submit({"--op", "gemm", "--shape", "M=48,N=48,K=48", "--dtype", "f32,bf16",
                                          "--min-time-ms", "1500", "--max-time-ms", "1500"});
  v1::Job job = c.WaitForJob(id, JobRunning, seconds(60));
  ASSERT_EQ(job.state(), v1::RUNNING);
  ASSERT_EQ(job.worker_id(), c.worker_id(0));
  c.worker(0).Signal(SIGKILL);
  c.worker(0).Wait();
  c.StartWorker("b");
  job = c.WaitForJob(id, JobFinished, seconds(180));
  ASSERT_EQ(job.state(), v1::SUCCEEDED) << job.DebugString();
  EXPECT_EQ(job.worker_id(), c.worker_id(1));
  EXPECT_EQ(job.attempts(), 2);
  auto res = c.Results(id);
  ASSERT_EQ(res.results_size(), 4);  // gemm's 2 CPU variants x 2 dtypes, from the second attempt only
  std::set<int> indices;
  for (const auto& r : res.results()) {
    indices.insert(r.index());
    EXPECT_EQ(r.worker_id(), c.worker_id(1));
    EXPECT_EQ(r.attempt(), 2);
    EXPECT_EQ(r.status(), v1::OK) << r.status_message();
  }
  EXPECT_EQ(indices.size(), static_cast<size_t>(res.results_size())) << "duplicated results";
  EXPECT_EQ(*indices.begin(), 0);
  EXPECT_EQ(*indices.rbegin(), res.results_size() - 1);
}

TEST(EndToEnd, CoordinatorRestartLosesNoJobAndDuplicatesNone) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker("a");
  c.worker(0).Signal(SIGTERM);
  c.worker(0).Wait();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(c.Submit({"--op", "vector_add", "--shape", "N=" + std::to_string(1000 + i), "--dtype", "f32",
                                   "--max-time-ms", "200", "--idempotency-key", "key-" + std::to_string(i)}));
  ASSERT_EQ(ListJobs(c).jobs_size(), 3);
  c.coordinator().Signal(SIGKILL);
  c.coordinator().Wait();

  c.StartCoordinator();
  auto jobs = ListJobs(c);
  ASSERT_EQ(jobs.jobs_size(), 3);
  for (const auto& j : jobs.jobs()) EXPECT_EQ(j.state(), v1::QUEUED);
  // The same idempotency key after the restart names the same job.
  EXPECT_EQ(c.Submit({"--op", "vector_add", "--shape", "N=1001", "--dtype", "f32", "--idempotency-key", "key-1"}),
            ids[1]);
  c.StartWorker("b");
  for (const auto& id : ids) {
    v1::Job job = c.WaitForJob(id, JobFinished, seconds(120));
    EXPECT_EQ(job.state(), v1::SUCCEEDED) << job.DebugString();
    EXPECT_EQ(job.attempts(), 1);
    auto res = c.Results(id);
    std::set<std::string> seen;
    for (const auto& r : res.results()) EXPECT_TRUE(seen.insert(r.variant()).second) << "duplicate " << r.variant();
    EXPECT_EQ(res.results_size(), 2);  // vector_add's 2 CPU variants, f32
  }
  EXPECT_EQ(ListJobs(c).jobs_size(), 3);
}

// The coordinator killed (SIGKILL) while a job is RUNNING and has results stored; restarted on the
// same database and the same address (a unix socket in the test's folder: no port to lose to another
// process meanwhile). The worker, which kept its lease, goes on: the job completes once, in its first
// attempt, with every result exactly once.
TEST(EndToEnd, CoordinatorKilledMidJobResumesWithEveryResultOnce) {
  Cluster c;
  const std::vector<std::string> flags = {"--listen", "unix:" + c.dir() + "/coordinator.sock", "--lease-ttl-ms",
                                          "60000"};
  c.StartCoordinator(flags);
  c.StartWorker("a");
  // Four results of at least 1.5 s each.
  const std::string id = c.Submit({"--op", "gemm", "--shape", "M=48,N=48,K=48", "--dtype", "f32,bf16",
                                   "--min-time-ms", "1500", "--max-time-ms", "1500"});
  const v1::Job before = c.WaitForJob(
      id, [](const v1::Job& j) { return j.progress().results_done() >= 1 || JobFinished(j); }, seconds(120));
  ASSERT_EQ(before.state(), v1::RUNNING) << before.DebugString();
  const int stored = c.Results(id).results_size();
  ASSERT_GE(stored, 1);
  c.coordinator().Signal(SIGKILL);
  c.coordinator().Wait();

  c.StartCoordinator(flags);
  EXPECT_GE(c.Results(id).results_size(), stored) << "results stored before the kill were lost";
  const v1::Job job = c.WaitForJob(id, JobFinished, seconds(180));
  ASSERT_EQ(job.state(), v1::SUCCEEDED) << job.DebugString();
  EXPECT_EQ(job.attempts(), 1);
  EXPECT_EQ(job.worker_id(), c.worker_id(0));
  EXPECT_EQ(job.progress().results_done(), 4);
  EXPECT_EQ(job.progress().results_total(), 4);
  auto res = c.Results(id);
  ASSERT_EQ(res.results_size(), 4);  // gemm's 2 CPU variants x 2 dtypes
  std::set<int> indices;
  for (const auto& r : res.results()) {
    EXPECT_TRUE(indices.insert(r.index()).second) << "result " << r.index() << " stored twice";
    EXPECT_EQ(r.attempt(), 1);
    EXPECT_EQ(r.status(), v1::OK) << r.status_message();
  }
  EXPECT_EQ(indices, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(ListJobs(c).jobs_size(), 1);
  EXPECT_TRUE(c.worker(0).Running());
}

TEST(EndToEnd, AFaultOrAHangCostsOneResultAndTheWorkerGoesOn) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker("a");
  // The test-only op comes with its job, from the test kernel library (kernels/testing/) as a plugin.
  // Hot cache: cold samples rewrite twice the host's last-level cache each, not what this test is about.
  // A 10 s timeout (20 s with the runner's start grace): a hundred times what the well-behaved variants
  // need on a starved host (multi_device_e2e_test.cc).
  const std::string id = c.Submit({"--op", "fault_injection", "--plugin", KBENCH_TEST_KERNELS, "--preset", "small",
                                   "--timeout-ms", "10000", "--max-time-ms", "200", "--cache", "hot"});
  v1::Job job = c.WaitForJob(id, JobFinished, seconds(180));
  ASSERT_EQ(job.state(), v1::SUCCEEDED) << job.DebugString();
  auto res = c.Results(id);
  std::map<std::string, v1::Result> by_variant;
  for (const auto& r : res.results()) by_variant[r.variant()] = r;
  ASSERT_EQ(by_variant.size(), 5u);
  EXPECT_EQ(by_variant["cpu_segfault"].status(), v1::RUNTIME_ERROR);
  EXPECT_NE(by_variant["cpu_segfault"].status_message().find("signal 11"), std::string::npos)
      << by_variant["cpu_segfault"].status_message();
  EXPECT_EQ(by_variant["cpu_hang"].status(), v1::TIMEOUT) << by_variant["cpu_hang"].status_message();
  EXPECT_EQ(by_variant["cpu_wrong"].status(), v1::INCORRECT);
  EXPECT_GT(by_variant["cpu_wrong"].correctness().mismatches(), 0);
  // Passes the check before timing (the default 3 trials), then skips its work: the check after
  // timing makes it INCORRECT, through the whole service.
  EXPECT_EQ(by_variant["cpu_quits_after_n"].status(), v1::INCORRECT) << by_variant["cpu_quits_after_n"].status_message();
  EXPECT_EQ(by_variant["cpu_quits_after_n"].status_message().rfind("after timing: ", 0), 0u)
      << by_variant["cpu_quits_after_n"].status_message();
  EXPECT_EQ(by_variant["cpu_quits_after_n"].timing().count(), 0);  // no timing reported (the store keeps an empty one)
  EXPECT_EQ(by_variant["cpu_quits_after_n"].timing().median_ns(), 0);
  // Runs after the crash and the hang, in a fresh runner: they cost their own results only.
  EXPECT_EQ(by_variant["cpu_ok"].status(), v1::OK) << by_variant["cpu_ok"].status_message();
  EXPECT_TRUE(c.worker(0).Running());
}

}  // namespace
}  // namespace kbench::e2e
