// The admin controls of the series as the verdicts use them (series_controls.h): a threshold override
// changes a verdict, a muted series keeps its SLOWER verdict (stored and shown muted) but raises no
// alert gauge and asks for no re-run, a known step restarts the baseline; each control is recorded
// with who and when. The coordinator, a fake clock and a temporary SQLite store.
#include <memory>
#include <string>
#include <vector>

#include "fake_clock.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/series_controls.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

struct SnapshotObserver : CoordinatorObserver {
  FleetSnapshot snapshot;
  void Snapshot(const FleetSnapshot& s) override { snapshot = s; }
};

// An OK result of the small preset with 50 samples spread +-0.5% around center_ns.
v1::Result Timed(double center_ns) {
  v1::Result r = testing::OkResult(0, 0);
  r.mutable_problem()->set_preset("small");
  for (int i = 0; i < 50; ++i) r.mutable_timing()->add_samples_ns(center_ns * (1 + 0.001 * ((i * 37) % 11 - 5)));
  r.mutable_timing()->set_median_ns(center_ns);
  return r;
}

v1::SeriesControl Control(v1::SeriesControlKind kind, const std::string& variant = "") {
  v1::SeriesControl c;
  c.set_kind(kind);
  c.mutable_scope()->set_op("rmsnorm");
  c.mutable_scope()->set_variant(variant);
  return c;
}

class SeriesControlsTest : public ::testing::Test {
 protected:
  SeriesControlsTest() {
    auto store = SqliteStore::Open(testing::TempDbPath());
    EXPECT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    Reconfigure(/*confirm=*/false);
    auto w = coordinator_->RegisterWorker(testing::CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
    EXPECT_TRUE(w.ok()) << w.status();
    worker_ = w.ok() ? w->worker_id : "";
  }

  // A coordinator over the same store; confirm: confirming re-runs of a SLOWER (off: a test's jobs are
  // the only ones queued).
  void Reconfigure(bool confirm) {
    CoordinatorConfig config;
    config.confirm_regressions = confirm;
    coordinator_ = std::make_unique<Coordinator>(config, store_.get(), &clock_, &observer_);
  }

  // One job on `branch` reporting `result`; returns the job's stored history point.
  HistoryRow RunJob(const std::string& branch, const v1::Result& result) {
    v1::JobSpec spec = testing::RmsnormSpec();
    (*spec.mutable_labels())["branch"] = branch;
    auto submitted = coordinator_->Submit(spec, "");
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    auto lease = coordinator_->LeaseJob(worker_);
    EXPECT_TRUE(lease.ok() && lease->granted);
    if (!submitted.ok() || !lease.ok() || !lease->granted) return {};
    EXPECT_EQ(lease->job.job_id(), submitted->job_id);
    EXPECT_TRUE(coordinator_->ReportProgress(lease->lease_id, nullptr, {result}).ok());
    EXPECT_TRUE(coordinator_->CompleteJob(lease->lease_id, false, "").ok());
    clock_.AdvanceMs(1000);
    auto history = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
    EXPECT_TRUE(history.ok()) << history.status();
    if (history.ok())
      for (const HistoryRow& p : history->points)
        if (p.job_id == submitted->job_id) return p;
    ADD_FAILURE() << "no history point for " << submitted->job_id;
    return {};
  }

  v1::SeriesControl Set(const v1::SeriesControl& c, const std::string& who = "alice") {
    auto r = coordinator_->SetSeriesControl(c, who);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : v1::SeriesControl();
  }

  bool Gauge() {
    EXPECT_TRUE(coordinator_->PublishSnapshot().ok());
    EXPECT_EQ(observer_.snapshot.series.size(), 1u);
    return !observer_.snapshot.series.empty() && observer_.snapshot.series.begin()->second.regression;
  }

  size_t Jobs() { return coordinator_->ListJobs(1000, v1::JOB_STATE_UNSPECIFIED)->size(); }

  FakeClock clock_;
  SnapshotObserver observer_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
  std::string worker_;
};

TEST_F(SeriesControlsTest, ControlsAreRecordedWithWhoAndWhen) {
  const int64_t now = clock_.NowUnixMs();
  const v1::SeriesControl mute = Set(Control(v1::SERIES_MUTE, "cpu_naive"), "alice");
  EXPECT_GT(mute.id(), 0);
  EXPECT_EQ(mute.set_by(), "alice");
  EXPECT_EQ(mute.set_unix_ms(), now);
  clock_.AdvanceMs(5);
  const v1::SeriesControl step = Set(Control(v1::SERIES_STEP), "bob");
  EXPECT_GT(step.id(), mute.id());
  EXPECT_EQ(step.at_unix_ms(), now + 5);  // A step without a time is at now.
  auto listed = coordinator_->ListSeriesControls("rmsnorm");
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].kind(), v1::SERIES_MUTE);
  EXPECT_EQ((*listed)[0].scope().variant(), "cpu_naive");
  EXPECT_EQ((*listed)[1].set_by(), "bob");
  EXPECT_TRUE(coordinator_->ListSeriesControls("softmax")->empty());
  // Refused, naming the field, and nothing recorded.
  v1::SeriesControl no_op = Control(v1::SERIES_MUTE);
  no_op.mutable_scope()->clear_op();
  EXPECT_EQ(coordinator_->SetSeriesControl(no_op, "alice").status().code(), absl::StatusCode::kInvalidArgument);
  v1::SeriesControl bad = Control(v1::SERIES_THRESHOLD);
  bad.set_threshold(1.5);
  auto refused = coordinator_->SetSeriesControl(bad, "alice");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("threshold"), absl::string_view::npos) << refused.status();
  EXPECT_EQ(coordinator_->ListSeriesControls("")->size(), 2u);
}

TEST_F(SeriesControlsTest, AThresholdOverrideChangesTheVerdict) {
  for (int i = 0; i < 4; ++i) RunJob("main", Timed(1000));
  // +6% against a tight baseline: SLOWER under the default 3% threshold.
  EXPECT_EQ(RunJob("pr-1", Timed(1060)).verdict.verdict, v1::SLOWER);
  v1::SeriesControl t = Control(v1::SERIES_THRESHOLD);
  t.set_threshold(0.10);
  Set(t);
  const HistoryRow within = RunJob("pr-2", Timed(1060));
  EXPECT_EQ(within.verdict.verdict, v1::SAME);  // The change's interval lies within +-10%.
  EXPECT_DOUBLE_EQ(within.threshold_override, 0.10);
  t.set_threshold(0);  // Cleared: the default threshold again.
  Set(t);
  EXPECT_EQ(RunJob("pr-3", Timed(1060)).verdict.verdict, v1::SLOWER);
}

TEST_F(SeriesControlsTest, AMutedSeriesKeepsItsVerdictButRaisesNoAlert) {
  Reconfigure(/*confirm=*/true);
  for (int i = 0; i < 4; ++i) RunJob("main", Timed(1000));
  EXPECT_FALSE(Gauge());
  Set(Control(v1::SERIES_MUTE, "cpu_naive"));
  const size_t jobs = Jobs();
  const HistoryRow slow = RunJob("main", Timed(1200));
  EXPECT_EQ(slow.verdict.verdict, v1::SLOWER);  // Still judged and stored...
  EXPECT_TRUE(slow.muted);                      // ...and shown muted,
  EXPECT_FALSE(Gauge());                        // but no alert,
  EXPECT_EQ(Jobs(), jobs + 1) << "its own job only: a muted series asks for no confirming re-run";
  // Unmuted, the series' latest point (that SLOWER, not confirmed) raises the gauge.
  Set(Control(v1::SERIES_UNMUTE, "cpu_naive"));
  EXPECT_TRUE(Gauge());
}

TEST_F(SeriesControlsTest, AStepRestartsTheBaselineAndTheReference) {
  for (int i = 0; i < 4; ++i) RunJob("main", Timed(1000));
  // A driver upgrade makes everything 10% slower: SLOWER against the old runs.
  EXPECT_EQ(RunJob("pr-1", Timed(1100)).verdict.verdict, v1::SLOWER);
  Set(Control(v1::SERIES_STEP));
  clock_.AdvanceMs(1);
  // After the step the series starts afresh: the first run has no baseline...
  EXPECT_EQ(RunJob("main", Timed(1100)).verdict.verdict, v1::NO_BASELINE);
  for (int i = 0; i < 3; ++i) RunJob("main", Timed(1100));
  // ...and an unchanged run after it is SAME against the new runs only.
  const HistoryRow after = RunJob("pr-2", Timed(1100));
  EXPECT_EQ(after.verdict.verdict, v1::SAME);
  EXPECT_NEAR(after.verdict.baseline_median_ns, 1100, 1);
}

TEST(SeriesControlsRule, TheLatestCoveringControlOfEachKindDecides) {
  const SeriesKey naive{"rmsnorm", "cpu_naive", "64x1024", v1::DTYPE_F32, "NVIDIA H100"};
  std::vector<v1::SeriesControl> controls;
  auto add = [&](v1::SeriesControl c) {
    c.set_id(static_cast<int64_t>(controls.size()) + 1);
    controls.push_back(c);
  };
  add(Control(v1::SERIES_MUTE));               // Per op: covers every variant.
  add(Control(v1::SERIES_UNMUTE, "v5_tma"));   // Another variant: does not cover cpu_naive.
  v1::SeriesControl t = Control(v1::SERIES_THRESHOLD, "cpu_naive");
  t.set_threshold(0.05);
  add(t);
  v1::SeriesControl other_gpu = Control(v1::SERIES_THRESHOLD);
  other_gpu.mutable_scope()->set_gpu_model("NVIDIA H200");
  other_gpu.set_threshold(0.2);
  add(other_gpu);
  EffectiveControls e = ControlsFor(controls, naive);
  EXPECT_TRUE(e.muted);
  ASSERT_TRUE(e.threshold.has_value());
  EXPECT_DOUBLE_EQ(*e.threshold, 0.05);
  EXPECT_EQ(e.step_after_ms, 0);
  add(Control(v1::SERIES_UNMUTE));
  EXPECT_FALSE(ControlsFor(controls, naive).muted);
  SeriesKey hot = naive;
  hot.cache_mode = v1::HOT;
  v1::SeriesControl cold_only = Control(v1::SERIES_MUTE);
  cold_only.mutable_scope()->set_cache_mode(v1::COLD);
  add(cold_only);
  EXPECT_TRUE(ControlsFor(controls, naive).muted);
  EXPECT_FALSE(ControlsFor(controls, hot).muted);
}

}  // namespace
}  // namespace kbench::server
