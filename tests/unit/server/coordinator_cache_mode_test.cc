// Results measured with a hot cache (back-to-back launches, data left in L2) are faster than cold
// ones by design: they must never join a cold series' baseline, where they would make every cold
// result after them read SLOWER, nor be judged against it. Hot results form a series of their own per
// hot batch (the series key's cache mode and hot batch), as do results of another backend; the
// coordinator, a fake clock and a temporary SQLite store.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fake_clock.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "server/coordinator/coordinator.h"
#include "server/store/result_columns.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// An OK result of the small preset with 50 samples spread +-0.5% around center_ns, in cache mode
// (HOT: `batch` launches per sample).
v1::Result Timed(double center_ns, v1::CacheMode mode, int batch = 20) {
  v1::Result r = testing::OkResult(0, 0);
  r.mutable_problem()->set_preset("small");
  r.mutable_timing()->set_cache_mode(mode);
  r.mutable_timing()->set_launches_per_sample(mode == v1::HOT ? batch : 1);
  for (int i = 0; i < 50; ++i) r.mutable_timing()->add_samples_ns(center_ns * (1 + 0.001 * ((i * 37) % 11 - 5)));
  r.mutable_timing()->set_median_ns(center_ns);
  return r;
}

class CacheModeBaselineTest : public ::testing::Test {
 protected:
  CacheModeBaselineTest() {
    auto store = SqliteStore::Open(testing::TempDbPath());
    EXPECT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    coordinator_ = std::make_unique<Coordinator>(CoordinatorConfig{}, store_.get(), &clock_, nullptr);
    auto w = coordinator_->RegisterWorker(testing::CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
    EXPECT_TRUE(w.ok()) << w.status();
    worker_ = w.ok() ? w->worker_id : "";
  }

  // One job on `branch` reporting `result`; returns the job id.
  std::string RunJob(const std::string& branch, const v1::Result& result) {
    v1::JobSpec spec = testing::RmsnormSpec();
    (*spec.mutable_labels())["branch"] = branch;
    auto submitted = coordinator_->Submit(spec, "");
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    auto lease = coordinator_->LeaseJob(worker_);
    EXPECT_TRUE(lease.ok() && lease->granted);
    if (!submitted.ok() || !lease.ok() || !lease->granted) return "";
    EXPECT_TRUE(coordinator_->ReportProgress(lease->lease_id, nullptr, {result}).ok());
    EXPECT_TRUE(coordinator_->CompleteJob(lease->lease_id, false, "").ok());
    clock_.AdvanceMs(1000);
    return submitted->job_id;
  }

  // The stored verdict of the job's result.
  HistoryRow PointOf(const std::string& job_id) {
    auto history = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
    EXPECT_TRUE(history.ok()) << history.status();
    if (history.ok())
      for (const HistoryRow& p : history->points)
        if (p.job_id == job_id) return p;
    ADD_FAILURE() << "no history point for " << job_id;
    return {};
  }

  FakeClock clock_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
  std::string worker_;
};

TEST_F(CacheModeBaselineTest, HotResultsStayOutOfTheColdBaseline) {
  for (int i = 0; i < 3; ++i) RunJob("main", Timed(1000, v1::COLD));
  // Three hot results on main, twice as fast: pooled with the cold ones they would pull the baseline
  // median down to ~500-1000 ns and make the unchanged cold result below SLOWER.
  for (int i = 0; i < 3; ++i) RunJob("main", Timed(500, v1::HOT));
  const HistoryRow cold = PointOf(RunJob("pr-1", Timed(1000, v1::COLD)));
  EXPECT_EQ(cold.verdict.verdict, v1::SAME) << cold.verdict.change_fraction;
  EXPECT_NEAR(cold.verdict.baseline_median_ns, 1000, 1);
  EXPECT_EQ(cold.series.shape, "64x1024");
  // CACHE_MODE_UNSPECIFIED means COLD: the same series.
  const HistoryRow unspecified = PointOf(RunJob("pr-2", Timed(1000, v1::CACHE_MODE_UNSPECIFIED)));
  EXPECT_EQ(unspecified.verdict.verdict, v1::SAME);
  EXPECT_EQ(unspecified.series.shape, "64x1024");
}

TEST_F(CacheModeBaselineTest, HotResultsAreJudgedAgainstHotResultsOnly) {
  for (int i = 0; i < 3; ++i) RunJob("main", Timed(1000, v1::COLD));
  // The first hot result has no hot baseline: not judged against the cold one (it would read FASTER).
  const HistoryRow first = PointOf(RunJob("main", Timed(500, v1::HOT)));
  EXPECT_EQ(first.verdict.verdict, v1::NO_BASELINE);
  EXPECT_EQ(first.series.shape, "64x1024");
  EXPECT_EQ(first.series.cache_mode, v1::HOT);
  EXPECT_EQ(first.series.hot_batch, 20);
  RunJob("main", Timed(500, v1::HOT));
  const HistoryRow slower = PointOf(RunJob("pr-1", Timed(600, v1::HOT)));
  EXPECT_EQ(slower.verdict.verdict, v1::SLOWER);
  EXPECT_NEAR(slower.verdict.baseline_median_ns, 500, 1);
}

TEST(CacheModeSeries, OnlyHotChangesTheSeries) {
  v1::Result r = Timed(1000, v1::COLD);
  const SeriesKey cold = SeriesOf(r);
  r.mutable_timing()->set_cache_mode(v1::CACHE_MODE_UNSPECIFIED);
  EXPECT_EQ(SeriesOf(r), cold);
  r.mutable_timing()->set_cache_mode(v1::HOT);
  r.mutable_timing()->set_launches_per_sample(20);
  const SeriesKey hot = SeriesOf(r);
  EXPECT_NE(hot, cold);
  EXPECT_EQ(hot.shape, cold.shape);  // The key's columns, not a shape suffix, tell them apart.
  EXPECT_EQ(hot.cache_mode, v1::HOT);
  EXPECT_EQ(hot.hot_batch, 20);
  EXPECT_EQ(SeriesLabel(hot), cold.shape + " hot/20");
  r.mutable_timing()->set_launches_per_sample(100);
  EXPECT_NE(SeriesOf(r), hot);
  r.mutable_timing()->set_launches_per_sample(20);
  r.mutable_device()->set_backend(v1::BACKEND_CPU);
  EXPECT_NE(SeriesOf(r), hot);
}

TEST_F(CacheModeBaselineTest, AnotherHotBatchIsAnotherSeries) {
  for (int i = 0; i < 3; ++i) RunJob("main", Timed(500, v1::HOT, 20));
  // A batch of 100 amortizes the launch further (faster per launch): judged against batch 20 it would
  // read FASTER; it has no baseline of its own yet.
  const HistoryRow big = PointOf(RunJob("main", Timed(400, v1::HOT, 100)));
  EXPECT_EQ(big.verdict.verdict, v1::NO_BASELINE);
  EXPECT_EQ(big.series.hot_batch, 100);
  const HistoryRow same = PointOf(RunJob("pr-1", Timed(500, v1::HOT, 20)));
  EXPECT_EQ(same.verdict.verdict, v1::SAME);
  // History filters on the key's columns.
  HistoryQuery q{"rmsnorm"};
  q.cache_mode = v1::HOT;
  q.hot_batch = 100;
  auto history = coordinator_->GetHistory(q);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->points.size(), 1u);
  EXPECT_EQ(history->points[0].series.hot_batch, 100);
  q.cache_mode = v1::COLD;
  q.hot_batch = 0;
  history = coordinator_->GetHistory(q);
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_TRUE(history->points.empty());
}

}  // namespace
}  // namespace kbench::server
