// Chaos: a few hundred small CPU jobs run while a seeded schedule kills, at random points, a worker
// (restarted), a runner (the worker replaces it), the coordinator (restarted on the same database) and,
// on the PostgreSQL store, the PostgreSQL server (restarted: crash recovery). Submissions are retried
// with their idempotency key whenever a call fails. At the end every job must have finished exactly
// once: one job per key, SUCCEEDED, each result index present once and from the job's last attempt,
// and the history holding each OK result once. A result may be RUNTIME_ERROR only for a killed runner.
// Nothing waits on time: each step waits on observable state, with deadlines far beyond need.
// KBENCH_CHAOS_SEED picks another schedule (the seed is printed).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/channel.h"
#include "chaos_cluster.h"
#include "gtest/gtest.h"
#include "postgres_fixture.h"

namespace kbench::e2e {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr int kJobs = 300;
constexpr int kKills = 40;
constexpr int kShapes = 3;                   // Results per job: 2 variants x 3 shapes.
constexpr int kResults = 2 * kShapes;
constexpr int kWorkers = 2;
constexpr int kWindow = 12;                  // Jobs submitted ahead of those finished.
constexpr seconds kDeadline{600};            // For the whole run; a healthy one takes a few minutes.
constexpr const char* kVariants[] = {"cpu_naive", "cpu_parallel"};

enum class Kill { kWorker, kRunner, kCoordinator, kPostgres };

uint64_t Seed() {
  const char* s = std::getenv("KBENCH_CHAOS_SEED");
  return s != nullptr ? std::strtoull(s, nullptr, 10) : 18;
}

// Job i: vector_add on three sizes of its own, both CPU variants, measured briefly (hot, few samples).
v1::JobSpec ChaosSpec(int i) {
  v1::JobSpec spec;
  spec.set_op("vector_add");
  for (const char* v : kVariants) spec.add_variants(v);
  for (int s = 0; s < kShapes; ++s) {
    v1::Problem* p = spec.add_problems()->mutable_shape();
    p->add_dims()->set_value(4096 * (s + 1) + i);
    p->set_dtype(v1::DTYPE_F32);
  }
  v1::MeasurementSettings* s = spec.mutable_settings();
  s->set_cache_mode(v1::HOT);
  s->set_warmup_ns(1'000'000);
  s->set_min_samples(3);
  s->set_max_samples(10);
  s->set_min_time_ns(1'000'000);
  s->set_max_time_ns(10'000'000);
  s->set_correctness_trials(1);
  (*spec.mutable_labels())["branch"] = "main";
  return spec;
}

class ChaosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kbench-chaos.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    cluster_.reset();
    if (!HasFailure() && std::getenv("KBENCH_E2E_KEEP") == nullptr) std::filesystem::remove_all(dir_);
    else std::cerr << "chaos test files kept in " << dir_ << "\n";
  }

  // Runs the whole schedule; pg: the PostgreSQL server to kill too, when the store is PostgreSQL.
  void Run(const std::string& db, server::testing::PostgresServer* pg);

  // Jobs of ours in `state`, from the coordinator; -1 while it cannot answer.
  int Count(v1::JobState state) {
    v1::ListJobsRequest req;
    req.set_limit(1000);
    req.set_state(state);
    v1::ListJobsResponse resp;
    auto ctx = api::MakeContext({cluster_->address(), ""}, seconds(10));
    if (!cluster_->stub().ListJobs(ctx.get(), req, &resp).ok()) return -1;
    return resp.jobs_size();
  }
  int Finished() {
    const int ok = Count(v1::SUCCEEDED);
    const int failed = Count(v1::FAILED);
    return ok < 0 || failed < 0 ? -1 : ok + failed;
  }
  // The worker of a RUNNING job that already has results stored, else of any RUNNING job, else -1.
  // Polls up to `patience` for the former (a kill in the middle of a job is the interesting one).
  int BusyWorker(std::chrono::milliseconds patience, bool* mid_job) {
    const Clock::time_point until = Clock::now() + patience;
    int any = -1;
    do {
      any = RunningWorker(mid_job);
      if (*mid_job) return any;
      std::this_thread::sleep_for(milliseconds(20));  // Polling the coordinator's state.
    } while (Clock::now() < until);
    return any;
  }
  int RunningWorker(bool* mid_job) {
    *mid_job = false;
    v1::ListJobsRequest req;
    req.set_limit(1000);
    req.set_state(v1::RUNNING);
    v1::ListJobsResponse resp;
    auto ctx = api::MakeContext({cluster_->address(), ""}, seconds(10));
    if (!cluster_->stub().ListJobs(ctx.get(), req, &resp).ok()) return -1;
    int any = -1;
    for (const v1::Job& j : resp.jobs()) {
      const int i = cluster_->WorkerIndex(j.worker_id());
      if (i < 0) continue;
      if (j.progress().results_done() > 0) {
        *mid_job = true;
        return i;
      }
      any = i;
    }
    return any;
  }
  void Submitter(uint64_t seed);
  void Verify(uint64_t seed);

  std::string dir_;
  std::unique_ptr<ChaosCluster> cluster_;
  std::atomic<bool> stop_{false};
  std::atomic<int> submitted_{0};
  std::map<int, std::string> job_ids_;  // Job number -> id; written by the submitter, read after it ends.
  std::vector<std::string> submit_problems_;
  std::map<Kill, int> kills_;
  int kills_mid_job_ = 0;
};

// Submits job i once fewer than kWindow are unfinished; retries each call with the same key until
// it is answered. The same key answered with another job id is a duplicate.
void ChaosTest::Submitter(uint64_t seed) {
  int finished = 0;
  for (int i = 0; i < kJobs && !stop_; ++i) {
    while (!stop_ && i >= finished + kWindow) {
      std::this_thread::sleep_for(milliseconds(100));  // Polling the coordinator's state.
      if (const int f = Finished(); f >= 0) finished = f;
    }
    v1::SubmitRequest req;
    *req.mutable_spec() = ChaosSpec(i);
    req.set_idempotency_key(absl::StrCat("chaos-", seed, "-", i));
    std::string id;
    while (!stop_) {
      v1::SubmitResponse resp;
      auto ctx = api::MakeContext({cluster_->address(), ""}, seconds(10));
      const grpc::Status s = cluster_->stub().Submit(ctx.get(), req, &resp);
      if (s.ok()) {
        if (!id.empty() && resp.job_id() != id)
          submit_problems_.push_back(absl::StrCat("key ", req.idempotency_key(), " gave ", id, " then ", resp.job_id()));
        id = resp.job_id();
        break;
      }
      if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
        submit_problems_.push_back(absl::StrCat("job ", i, " refused: ", s.error_message()));
        break;
      }
      std::this_thread::sleep_for(milliseconds(100));  // The coordinator or its database is down: retry.
    }
    if (!id.empty()) job_ids_[i] = id;
    submitted_ = i + 1;
  }
}

void ChaosTest::Run(const std::string& db, server::testing::PostgresServer* pg) {
  const uint64_t seed = Seed();
  std::cout << "chaos seed " << seed << " (KBENCH_CHAOS_SEED), " << (pg ? "PostgreSQL" : "SQLite") << "\n";
  std::mt19937_64 rng(seed);
  // A short lease, so that a killed worker's job comes back soon; attempts enough for any schedule.
  cluster_ = std::make_unique<ChaosCluster>(dir_, db,
                                            std::vector<std::string>{"--lease-ttl-ms=3000", "--max-attempts=1000"});
  cluster_->StartCoordinator();
  for (int i = 0; i < kWorkers; ++i) cluster_->StartWorker(i);

  std::thread submitter([&] { Submitter(seed); });
  // Whatever ends this function (a failed assertion, a process that did not start), the submitter stops first.
  struct Join {
    ChaosTest* test;
    std::thread* thread;
    ~Join() {
      test->stop_ = true;
      if (thread->joinable()) thread->join();
    }
  } join{this, &submitter};
  const Clock::time_point deadline = Clock::now() + kDeadline;
  std::vector<Kill> kinds = {Kill::kWorker, Kill::kRunner, Kill::kCoordinator};
  if (pg != nullptr) kinds.push_back(Kill::kPostgres);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(kinds.size()) - 1);
  std::uniform_int_distribution<int> delay_ms(0, 400);
  for (int k = 0; k < kKills && Clock::now() < deadline; ++k) {
    // Kill k when about (k + 1) / (kKills + 1) of the jobs are done: spread over the whole run.
    const int due = (k + 1) * kJobs / (kKills + 1);
    while (Clock::now() < deadline && Finished() < due) std::this_thread::sleep_for(milliseconds(100));
    const Kill kind = kinds[static_cast<size_t>(pick(rng))];
    const int delay = delay_ms(rng);
    const int fallback_worker = static_cast<int>(rng() % kWorkers);
    std::this_thread::sleep_for(milliseconds(delay));  // A random point, not a synchronization.
    bool mid_job = false;
    const int busy = BusyWorker(milliseconds(3000), &mid_job);
    kills_mid_job_ += mid_job;
    switch (kind) {
      case Kill::kWorker:
      case Kill::kRunner: {
        const int i = busy >= 0 ? busy : fallback_worker;
        if (kind == Kill::kWorker) {
          cluster_->KillWorker(i);
          cluster_->StartWorker(i);
          ++kills_[kind];
        } else if (cluster_->KillRunnerOf(i)) {
          ++kills_[kind];
        }
        break;
      }
      case Kill::kCoordinator:
        cluster_->KillCoordinator();
        cluster_->StartCoordinator();
        ++kills_[kind];
        break;
      case Kill::kPostgres: {
        absl::Status killed = pg->Kill();
        ASSERT_TRUE(killed.ok()) << killed;
        ++kills_[kind];
        absl::Status restarted = pg->Restart();
        ASSERT_TRUE(restarted.ok()) << restarted;
        break;
      }
    }
  }
  // Until every job has finished, or every submission was answered and nothing is queued or running
  // though jobs are missing: lost (the final checks then name them).
  while (Clock::now() < deadline) {
    const int finished = Finished();
    if (submitted_ == kJobs && finished == kJobs) break;
    if (submitted_ == kJobs && finished >= 0 && Count(v1::QUEUED) == 0 && Count(v1::RUNNING) == 0 &&
        Finished() == finished)
      break;
    std::this_thread::sleep_for(milliseconds(200));
  }
  stop_ = true;
  submitter.join();
  ASSERT_EQ(submitted_.load(), kJobs) << "not every job was submitted before the deadline\n" << cluster_->Logs();
  const int finished = Finished();
  EXPECT_EQ(finished, kJobs) << "jobs lost, or unfinished at the deadline";
  if (finished != kJobs) {
    std::set<std::string> listed;
    v1::ListJobsRequest req;
    req.set_limit(1000);
    v1::ListJobsResponse resp;
    auto ctx = api::MakeContext({cluster_->address(), ""}, seconds(30));
    if (cluster_->stub().ListJobs(ctx.get(), req, &resp).ok())
      for (const v1::Job& j : resp.jobs()) listed.insert(j.job_id());
    for (const auto& [i, id] : job_ids_)
      EXPECT_EQ(listed.count(id), 1u) << "job " << i << " (" << id << ") was accepted and is not stored";
    FAIL() << cluster_->Logs();
  }
  std::cout << "kills: " << kills_[Kill::kWorker] << " worker, " << kills_[Kill::kRunner] << " runner, "
            << kills_[Kill::kCoordinator] << " coordinator, " << kills_[Kill::kPostgres] << " PostgreSQL; "
            << kills_mid_job_ << " of them while a job was RUNNING with results already stored\n";
  // The schedule must have done what it says: every kind of kill, several times in all.
  for (Kill kind : kinds) EXPECT_GE(kills_[kind], 1) << "kind " << static_cast<int>(kind) << " never killed";
  EXPECT_GE(kills_mid_job_, 1) << "no kill came while a job had results stored";
  Verify(seed);
}

void ChaosTest::Verify(uint64_t seed) {
  for (const std::string& p : submit_problems_) ADD_FAILURE() << p;
  // One job per key, each SUCCEEDED.
  v1::ListJobsRequest list;
  list.set_limit(1000);
  v1::ListJobsResponse jobs;
  auto ctx = api::MakeContext({cluster_->address(), ""}, seconds(30));
  ASSERT_TRUE(cluster_->stub().ListJobs(ctx.get(), list, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), kJobs) << "a submission was stored twice, or lost";
  std::set<std::string> keys, ids;
  for (const v1::Job& j : jobs.jobs()) {
    keys.insert(j.idempotency_key());
    ids.insert(j.job_id());
    EXPECT_EQ(j.state(), v1::SUCCEEDED) << j.job_id() << ": " << j.error();
  }
  EXPECT_EQ(keys.size(), static_cast<size_t>(kJobs));
  for (const auto& [i, id] : job_ids_) EXPECT_EQ(ids.count(id), 1u) << "job " << i << " (" << id << ") not listed";
  ASSERT_EQ(job_ids_.size(), static_cast<size_t>(kJobs));

  // Every result once, from the last attempt; RUNTIME_ERROR only where a runner was killed.
  int ok_results = 0, killed_results = 0;
  for (const auto& [i, id] : job_ids_) {
    v1::GetResultsRequest req;
    req.set_job_id(id);
    v1::GetResultsResponse resp;
    auto rctx = api::MakeContext({cluster_->address(), ""}, seconds(30));
    ASSERT_TRUE(cluster_->stub().GetResults(rctx.get(), req, &resp).ok());
    ASSERT_EQ(resp.results_size(), kResults) << "job " << i << " (" << id << ")";
    std::set<int> indices;
    std::set<std::string> variants;
    for (const v1::Result& r : resp.results()) {
      indices.insert(r.index());
      variants.insert(r.variant());
      EXPECT_EQ(r.attempt(), resp.job().attempts()) << id;
      if (r.status() == v1::OK) {
        ++ok_results;
      } else {
        ++killed_results;
        EXPECT_EQ(r.status(), v1::RUNTIME_ERROR) << id << ": " << r.status_message();
        EXPECT_NE(r.status_message().find("signal 9"), std::string::npos) << id << ": " << r.status_message();
      }
    }
    EXPECT_EQ(indices.size(), static_cast<size_t>(kResults)) << id;
    EXPECT_EQ(*indices.begin(), 0) << id;
    EXPECT_EQ(*indices.rbegin(), kResults - 1) << id;
    EXPECT_EQ(variants, (std::set<std::string>{kVariants[0], kVariants[1]})) << id;
  }
  EXPECT_LE(killed_results, kills_[Kill::kRunner]) << "more failed results than runners killed";

  // The history holds each OK result once: no row of an abandoned attempt survived. Per variant, as a
  // history answer holds at most 1000 points.
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  int history_points = 0;
  for (const char* variant : kVariants) {
    v1::GetHistoryRequest history;
    history.set_op("vector_add");
    history.set_variant(variant);
    history.set_limit(1000);
    v1::GetHistoryResponse points;
    auto hctx = api::MakeContext({cluster_->address(), ""}, seconds(30));
    ASSERT_TRUE(cluster_->stub().GetHistory(hctx.get(), history, &points).ok());
    ASSERT_LT(points.points_size(), 1000) << "raise kJobs' history query: the answer is capped";
    history_points += points.points_size();
    for (const v1::HistoryPoint& p : points.points()) {
      EXPECT_EQ(ids.count(p.job_id()), 1u) << p.job_id();
      EXPECT_TRUE(seen.insert({p.job_id(), p.variant(), p.shape()}).second)
          << "history twice: " << p.job_id() << " " << p.variant() << " " << p.shape();
    }
  }
  EXPECT_EQ(history_points, ok_results);
  std::cout << "verified " << kJobs << " jobs: " << ok_results << " OK results, " << killed_results
            << " RUNTIME_ERROR from killed runners (seed " << seed << ")\n";
}

TEST_F(ChaosTest, SqliteEveryJobFinishesExactlyOnce) { Run("", nullptr); }

TEST_F(ChaosTest, PostgresEveryJobFinishesExactlyOnce) {
  // A server of this test's own: it is killed, and no other test may share it. Its commits are
  // durable against a kill (synchronous_commit=on): with the fixture's default a killed server loses
  // its last commits, jobs Submit had accepted, which this test caught when it ran so.
  absl::StatusOr<std::unique_ptr<server::testing::PostgresServer>> pg =
      server::testing::PostgresServer::Start(/*durable_commits=*/true);
  ASSERT_TRUE(pg.ok()) << pg.status();
  absl::StatusOr<std::string> uri = (*pg)->CreateDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status();
  Run(*uri, pg->get());
  cluster_.reset();  // The coordinator and workers go before the server.
}

}  // namespace
}  // namespace kbench::e2e
