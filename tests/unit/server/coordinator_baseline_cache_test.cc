// The baseline cache changes no verdict. Two fleets see the same history step by step: two coordinator
// replicas with their caches, each on its own connection to one database, and a single coordinator
// without a cache on a database of its own. The history covers new main-branch results that move the
// baseline, pull-request results judged again and again against one baseline, a result sent again
// with other samples, an attempt whose results are deleted when its lease expires, a job judged
// against a baseline that holds its own earlier results, and a restart of the replicas. Every verdict,
// change, p-value and baseline median must come out bit for bit the same, on SQLite and PostgreSQL.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fake_clock.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "postgres_fixture.h"
#include "server/coordinator/coordinator.h"
#include "server/store/postgres_store.h"
#include "server/store/sqlite_store.h"
#include "store_backends.h"

namespace kbench::server {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

using Backend = testing::StoreBackend;

// Coordinators sharing one database, each on its own store (connection), all on one clock.
struct Fleet {
  Fleet(const Backend& backend, std::string location, int replicas, size_t cache_bytes)
      : backend(backend), location(std::move(location)), replicas(replicas) {
    config.lease_ttl = std::chrono::milliseconds(1000);
    config.baseline_cache_bytes = cache_bytes;
    // No confirming re-runs: their jobs would take the leases this history plans (coordinator_test.cc
    // tests them).
    config.confirm_regressions = false;
    Restart();
  }

  // Every replica stops (its cache gone) and starts again on the same database.
  void Restart() {
    coordinators.clear();
    stores.clear();
    for (int i = 0; i < replicas; ++i) {
      auto s = backend.open(location);
      ASSERT_TRUE(s.ok()) << s.status();
      stores.push_back(*std::move(s));
      coordinators.push_back(std::make_unique<Coordinator>(config, stores.back().get(), &clock));
    }
  }

  Coordinator& at(int replica) { return *coordinators[replica % replicas]; }

  BaselineCache::Stats Stats() const {
    BaselineCache::Stats sum;
    for (const auto& c : coordinators) {
      const BaselineCache::Stats s = c->baseline_cache_stats();
      sum.reused += s.reused;
      sum.updated += s.updated;
      sum.merged += s.merged;
    }
    return sum;
  }

  Backend backend;
  std::string location;
  int replicas;
  CoordinatorConfig config;
  FakeClock clock;
  std::vector<std::unique_ptr<Store>> stores;
  std::vector<std::unique_ptr<Coordinator>> coordinators;
  std::string worker;
};

// An OK result of the small preset on the worker's device (none named), samples lognormal.
v1::Result Sampled(int index, const std::string& variant, double center_ns, std::mt19937_64& rng, int n = 60) {
  v1::Result r = testing::OkResult(index, 0);
  r.set_variant(variant);
  r.mutable_problem()->set_preset("small");
  std::lognormal_distribution<double> noise(0, 0.01);
  std::vector<double> samples(n);
  for (double& x : samples) x = std::round(center_ns * noise(rng));  // Integer ns: ties, as timers give.
  for (double x : samples) r.mutable_timing()->add_samples_ns(x);
  std::sort(samples.begin(), samples.end());
  r.mutable_timing()->set_median_ns(samples[samples.size() / 2]);
  return r;
}

class CoordinatorBaselineCacheTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> cached_db = GetParam().new_location();
    absl::StatusOr<std::string> plain_db = GetParam().new_location();
    ASSERT_TRUE(cached_db.ok()) << cached_db.status();
    ASSERT_TRUE(plain_db.ok()) << plain_db.status();
    cached_ = std::make_unique<Fleet>(GetParam(), *cached_db, 2, CoordinatorConfig{}.baseline_cache_bytes);
    plain_ = std::make_unique<Fleet>(GetParam(), *plain_db, 1, 0);
    for (Fleet* f : {cached_.get(), plain_.get()}) {
      auto w = f->at(0).RegisterWorker(testing::CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
      ASSERT_TRUE(w.ok()) << w.status();
      f->worker = w->worker_id;
    }
  }

  // A job of branch submitted and leased through replica (the uncached fleet has one); lease ids by fleet.
  std::vector<std::string> Start(int replica, const std::string& branch) {
    std::vector<std::string> leases;
    for (Fleet* f : {cached_.get(), plain_.get()}) {
      v1::JobSpec spec = testing::RmsnormSpec();
      (*spec.mutable_labels())["branch"] = branch;
      EXPECT_TRUE(f->at(replica).Submit(spec, "").ok());
      auto lease = f->at(replica).LeaseJob(f->worker);
      EXPECT_TRUE(lease.ok() && lease->granted) << lease.status();
      leases.push_back(lease.ok() ? lease->lease_id : "");
    }
    return leases;
  }

  void Report(int replica, const std::vector<std::string>& leases, const std::vector<v1::Result>& results) {
    Fleet* fleets[] = {cached_.get(), plain_.get()};
    for (int i = 0; i < 2; ++i) {
      auto r = fleets[i]->at(replica).ReportProgress(leases[i], nullptr, results);
      ASSERT_TRUE(r.ok()) << r.status();
    }
  }

  void Complete(int replica, const std::vector<std::string>& leases) {
    Fleet* fleets[] = {cached_.get(), plain_.get()};
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(fleets[i]->at(replica).CompleteJob(leases[i], false, "").ok());
  }

  void Advance(int64_t ms) {
    cached_->clock.AdvanceMs(ms);
    plain_->clock.AdvanceMs(ms);
  }

  // A whole job: start, one report, complete; then time moves on.
  void RunJob(int replica, const std::string& branch, const std::vector<v1::Result>& results) {
    const std::vector<std::string> leases = Start(replica, branch);
    Report(replica, leases, results);
    Complete(replica, leases);
    Advance(100);
  }

  // Both fleets' histories, verdict for verdict, and their current baselines.
  void ExpectSameHistory() {
    for (const char* variant : {"cpu_naive", "cpu_blocked"}) {
      HistoryQuery q{"rmsnorm", variant};
      q.limit = 1000;
      auto cached = cached_->at(0).GetHistory(q);
      auto plain = plain_->at(0).GetHistory(q);
      ASSERT_TRUE(cached.ok()) << cached.status();
      ASSERT_TRUE(plain.ok()) << plain.status();
      ASSERT_EQ(cached->points.size(), plain->points.size());
      for (size_t i = 0; i < cached->points.size(); ++i) {
        const ResultVerdict& a = cached->points[i].verdict;
        const ResultVerdict& b = plain->points[i].verdict;
        SCOPED_TRACE(::testing::Message() << variant << " point " << i << " of " << cached->points.size());
        EXPECT_EQ(cached->points[i].branch, plain->points[i].branch);
        EXPECT_EQ(cached->points[i].median_ns, plain->points[i].median_ns);
        EXPECT_EQ(a.verdict, b.verdict);
        EXPECT_EQ(std::memcmp(&a.change_fraction, &b.change_fraction, sizeof(double)), 0)
            << a.change_fraction << " vs " << b.change_fraction;
        EXPECT_EQ(std::memcmp(&a.p_value, &b.p_value, sizeof(double)), 0) << a.p_value << " vs " << b.p_value;
        EXPECT_EQ(std::memcmp(&a.baseline_median_ns, &b.baseline_median_ns, sizeof(double)), 0);
      }
      EXPECT_EQ(cached->baseline_results, plain->baseline_results);
      EXPECT_EQ(cached->baseline_median_ns, plain->baseline_median_ns);
    }
  }

  std::mt19937_64 rng_{42};
  std::unique_ptr<Fleet> cached_;
  std::unique_ptr<Fleet> plain_;
};

TEST_P(CoordinatorBaselineCacheTest, CachedVerdictsEqualUncachedOnes) {
  // Main-branch history through both replicas: more than a baseline's ten results, so that it slides.
  for (int i = 0; i < 14; ++i)
    RunJob(i, "main", {Sampled(0, "cpu_naive", 1000, rng_), Sampled(1, "cpu_blocked", 500, rng_)});
  // Pull requests judged again and again against an unchanged baseline, slower, faster and the same.
  int replica = 0;
  for (double center : {1050.0, 1000.0, 950.0, 1001.0})
    RunJob(replica++, "pr-1", {Sampled(0, "cpu_naive", center, rng_)});
  ExpectSameHistory();

  // A main result sent again with other samples: the stored row is replaced (a new version).
  {
    const std::vector<std::string> leases = Start(0, "main");
    Report(0, leases, {Sampled(0, "cpu_naive", 1000, rng_)});
    RunJob(0, "pr-2", {Sampled(0, "cpu_naive", 1100, rng_)});  // Both replicas hold the first version...
    RunJob(1, "pr-2", {Sampled(0, "cpu_naive", 1100, rng_)});
    Report(1, leases, {Sampled(0, "cpu_naive", 1200, rng_)});  // ...which is replaced.
    Complete(1, leases);
    Advance(100);
  }
  RunJob(1, "pr-2", {Sampled(0, "cpu_naive", 1100, rng_)});
  RunJob(0, "pr-2", {Sampled(0, "cpu_naive", 1100, rng_)});

  // An attempt whose lease expires: its main results are deleted and the baseline goes back.
  {
    const std::vector<std::string> leases = Start(1, "main");
    Report(1, leases, {Sampled(0, "cpu_naive", 3000, rng_), Sampled(1, "cpu_blocked", 3000, rng_)});
    RunJob(0, "pr-3", {Sampled(0, "cpu_naive", 1000, rng_)});  // Judged against the doomed results.
    Advance(5000);  // The lease expires: the attempt's results are deleted, the job queued again.
    ASSERT_TRUE(cached_->at(0).RequeueExpired().ok());
    ASSERT_TRUE(plain_->at(0).RequeueExpired().ok());
    // The main job runs again (attempt 2), in two reports: the second result of its series is judged
    // against a baseline that leaves out the job's own first one; a pull request in between is judged
    // against one that holds it.
    auto lease1 = cached_->at(1).LeaseJob(cached_->worker);
    auto lease2 = plain_->at(0).LeaseJob(plain_->worker);
    ASSERT_TRUE(lease1.ok() && lease1->granted);
    ASSERT_TRUE(lease2.ok() && lease2->granted);
    ASSERT_EQ(lease1->job.attempts(), 2);
    const std::vector<std::string> again = {lease1->lease_id, lease2->lease_id};
    Report(1, again, {Sampled(0, "cpu_naive", 1000, rng_)});
    RunJob(0, "pr-3", {Sampled(0, "cpu_naive", 1000, rng_)});
    Report(0, again, {Sampled(1, "cpu_naive", 1010, rng_)});
    Complete(1, again);
    Advance(100);
  }
  ExpectSameHistory();

  // A restart empties the replicas' caches; judging goes on from the database alone.
  cached_->Restart();
  for (int i = 0; i < 3; ++i) {
    RunJob(i, "pr-4", {Sampled(0, "cpu_naive", 1040, rng_), Sampled(1, "cpu_blocked", 480, rng_)});
    RunJob(i, "main", {Sampled(0, "cpu_naive", 1000, rng_), Sampled(1, "cpu_blocked", 500, rng_)});
  }
  ExpectSameHistory();

  // The fast paths did run: pools reused and updated in place, not only merged afresh.
  const BaselineCache::Stats stats = cached_->Stats();
  EXPECT_GT(stats.reused, 0);
  EXPECT_GT(stats.updated, 0);
  EXPECT_GT(stats.merged, 0);
  const BaselineCache::Stats none = plain_->Stats();
  EXPECT_EQ(none.reused + none.updated, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, CoordinatorBaselineCacheTest, ::testing::Values(testing::SqliteBackend(), testing::PostgresBackend(2)),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kbench::server
