// The Coordinator's history: results judged against the main branch, confirming re-runs, history
// queries, fleet health (fixture: coordinator_fixture.h).
#include <map>
#include <memory>
#include <vector>

#include "coordinator_fixture.h"

namespace kbench::server {
namespace {

using namespace coordinator_testing;  // NOLINT: the fixture (coordinator_fixture.h)
using testing::CpuWorker;
using testing::CudaWorker;
using testing::OkResult;
using testing::RmsnormSpec;

// An OK result of the small preset with 50 samples spread +-0.5% around center_ns; no device named,
// so the coordinator takes the worker's.
v1::Result Timed(int index, double center_ns) {
  v1::Result r = OkResult(index, 0);
  r.mutable_problem()->set_preset("small");
  for (int i = 0; i < 50; ++i) r.mutable_timing()->add_samples_ns(center_ns * (1 + 0.001 * ((i * 37) % 11 - 5)));
  r.mutable_timing()->set_median_ns(center_ns);
  r.mutable_roofline()->add_ceilings()->set_utilization(0.4);
  return r;
}

class CoordinatorHistoryTest : public CoordinatorTest {
 protected:
  // Verdicts as stored, without confirming re-runs (CoordinatorConfirmTest has them).
  CoordinatorHistoryTest() { Reconfigure(false); }

  void Reconfigure(bool confirm) {
    config_.confirm_regressions = confirm;
    coordinator_ = std::make_unique<Coordinator>(config_, store_.get(), &clock_, &observer_);
  }

  // Submits a job with the labels, leases it on worker, reports the results and completes it.
  std::string RunJob(const std::string& worker, std::map<std::string, std::string> labels,
                     const std::vector<v1::Result>& results) {
    v1::JobSpec spec = RmsnormSpec();
    for (const auto& [k, v] : labels) (*spec.mutable_labels())[k] = v;
    const std::string id = Submit(spec);
    auto lease = coordinator_->LeaseJob(worker);
    EXPECT_TRUE(lease.ok() && lease->granted);
    if (!lease.ok() || !lease->granted) return id;
    EXPECT_EQ(lease->job.job_id(), id);
    auto report = coordinator_->ReportProgress(lease->lease_id, nullptr, results);
    EXPECT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(coordinator_->CompleteJob(lease->lease_id, false, "").ok());
    clock_.AdvanceMs(1000);
    return id;
  }

  HistoryRow PointOfJob(const std::string& job_id) {
    auto history = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
    EXPECT_TRUE(history.ok()) << history.status();
    if (history.ok())
      for (const HistoryRow& p : history->points)
        if (p.job_id == job_id) return p;
    ADD_FAILURE() << "no history point for " << job_id;
    return {};
  }

  std::vector<v1::Verdict> Verdicts(const HistoryOutcome& h) {
    std::vector<v1::Verdict> out;
    for (const HistoryRow& p : h.points) out.push_back(p.verdict.verdict);
    return out;
  }
};

TEST_F(CoordinatorHistoryTest, ResultsAreJudgedAgainstTheMainBranch) {
  const std::string w = Register(CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
  const std::map<std::string, std::string> main{{"branch", "main"}, {"git_sha", "aaa"}};
  RunJob(w, main, {Timed(0, 1000)});  // The series' first result: nothing to compare with.
  RunJob(w, main, {Timed(0, 1000)});
  RunJob(w, main, {Timed(0, 1000)});
  const std::string pr = RunJob(w, {{"branch", "pr-42"}, {"git_sha", "bbb"}}, {Timed(0, 1100)});
  const std::string faster = RunJob(w, {{"branch", "pr-43"}}, {Timed(0, 900)});

  auto history = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(Verdicts(*history),
            (std::vector<v1::Verdict>{v1::FASTER, v1::SLOWER, v1::SAME, v1::SAME, v1::NO_BASELINE}));
  const HistoryRow& slower = history->points[1];
  EXPECT_EQ(slower.job_id, pr);
  EXPECT_EQ(slower.branch, "pr-42");
  EXPECT_EQ(slower.git_sha, "bbb");
  EXPECT_EQ(slower.series.gpu_model, "NVIDIA H100");  // From the worker: the result named no device.
  EXPECT_EQ(slower.series.shape, "64x1024");
  EXPECT_NEAR(slower.verdict.change_fraction, 0.10, 0.002);
  EXPECT_LT(slower.verdict.p_value, 0.01);
  EXPECT_NEAR(slower.verdict.baseline_median_ns, 1000, 1);
  EXPECT_DOUBLE_EQ(slower.utilization, 0.4);
  EXPECT_EQ(history->points[0].job_id, faster);
  // The current baseline: the three main results' run medians.
  EXPECT_EQ(history->baseline_results, 3);
  EXPECT_NEAR(history->baseline_median_ns, 1000, 1);

  // Pull-request results are judged but are not the series' latest point; main results are.
  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  ASSERT_EQ(observer_.snapshot.series.size(), 1u);
  const auto& [labels, gauge] = *observer_.snapshot.series.begin();
  EXPECT_EQ(labels.gpu_model, "NVIDIA H100");
  EXPECT_EQ(labels.op, "rmsnorm");
  EXPECT_EQ(labels.variant, "cpu_naive");
  EXPECT_EQ(labels.shape, "64x1024");
  EXPECT_EQ(labels.dtype, "f32");
  EXPECT_DOUBLE_EQ(gauge.median_seconds, 1000e-9);
  EXPECT_DOUBLE_EQ(gauge.utilization, 0.4);
  EXPECT_FALSE(gauge.regression);

  // A regression that lands on main raises the series' regression gauge.
  RunJob(w, main, {Timed(0, 1200)});
  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  EXPECT_TRUE(observer_.snapshot.series.begin()->second.regression);
  EXPECT_DOUBLE_EQ(observer_.snapshot.series.begin()->second.median_seconds, 1200e-9);
}

class CoordinatorConfirmTest : public CoordinatorHistoryTest {
 protected:
  CoordinatorConfirmTest() { Reconfigure(true); }

  // Leases the next job, which must be a re-run confirming `confirms`, reports result and completes it.
  std::string RunRerun(const std::string& worker, const std::string& confirms, const v1::Result& result) {
    auto lease = coordinator_->LeaseJob(worker);
    EXPECT_TRUE(lease.ok() && lease->granted);
    if (!lease.ok() || !lease->granted) return "";
    const auto& spec = lease->job.spec();
    EXPECT_EQ(spec.labels().at(kConfirmsLabel), confirms);
    EXPECT_EQ(spec.labels().at("branch"), "main");
    EXPECT_EQ(spec.variants_size(), 1);
    EXPECT_EQ(spec.problems_size(), 1);
    EXPECT_EQ(spec.problems(0).preset(), "small");
    EXPECT_EQ(spec.selector().model(), "NVIDIA H100");  // The series' GPU model: another would be another series.
    EXPECT_TRUE(coordinator_->ReportProgress(lease->lease_id, nullptr, {result}).ok());
    EXPECT_TRUE(coordinator_->CompleteJob(lease->lease_id, false, "").ok());
    clock_.AdvanceMs(1000);
    return lease->job.job_id();
  }

  bool GaugeRegression() {
    EXPECT_TRUE(coordinator_->PublishSnapshot().ok());
    return !observer_.snapshot.series.empty() && observer_.snapshot.series.begin()->second.regression;
  }
};

TEST_F(CoordinatorConfirmTest, ASlowerIsAlertedOnlyWhenItsReRunConfirmsIt) {
  const std::string w = Register(CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
  const std::map<std::string, std::string> main{{"branch", "main"}, {"git_sha", "aaa"}};
  for (int i = 0; i < 4; ++i) RunJob(w, main, {Timed(0, 1000)});
  const size_t jobs = JobCount();

  // A slow run: SLOWER in its history, one re-run queued, the gauge not raised yet.
  const std::string first = RunJob(w, main, {Timed(0, 1200)});
  EXPECT_EQ(PointOfJob(first).verdict.verdict, v1::SLOWER);
  EXPECT_EQ(JobCount(), jobs + 2);
  EXPECT_FALSE(GaugeRegression());
  // The re-run reads slow too: confirmed, the gauge is raised.
  const std::string rerun = RunRerun(w, first, Timed(0, 1190));
  EXPECT_EQ(PointOfJob(rerun).verdict.verdict, v1::SLOWER);
  EXPECT_TRUE(GaugeRegression());
  // A re-run enqueues no re-run of its own.
  EXPECT_EQ(JobCount(), jobs + 2);
}

TEST_F(CoordinatorConfirmTest, AReRunThatReadsAsUsualClearsTheAlarm) {
  const std::string w = Register(CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
  const std::map<std::string, std::string> main{{"branch", "main"}, {"git_sha", "aaa"}};
  for (int i = 0; i < 4; ++i) RunJob(w, main, {Timed(0, 1000)});
  const std::string first = RunJob(w, main, {Timed(0, 1080)});  // A clock state, say.
  ASSERT_EQ(PointOfJob(first).verdict.verdict, v1::SLOWER);
  const std::string rerun = RunRerun(w, first, Timed(0, 1000));
  EXPECT_NE(PointOfJob(rerun).verdict.verdict, v1::SLOWER);
  EXPECT_FALSE(GaugeRegression());
}

TEST_F(CoordinatorConfirmTest, AResultReportedTwiceEnqueuesOneReRun) {
  const std::string w = Register(CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
  const std::map<std::string, std::string> main{{"branch", "main"}};
  for (int i = 0; i < 4; ++i) RunJob(w, main, {Timed(0, 1000)});
  const size_t jobs = JobCount();
  v1::JobSpec spec = RmsnormSpec();
  (*spec.mutable_labels())["branch"] = "main";
  Submit(spec);
  auto lease = coordinator_->LeaseJob(w);
  ASSERT_TRUE(lease.ok() && lease->granted);
  ASSERT_TRUE(coordinator_->ReportProgress(lease->lease_id, nullptr, {Timed(0, 1200)}).ok());
  ASSERT_TRUE(coordinator_->ReportProgress(lease->lease_id, nullptr, {Timed(0, 1200)}).ok());
  EXPECT_EQ(JobCount(), jobs + 2);
}

TEST_F(CoordinatorHistoryTest, OnlyOkResultsAreJudgedAndExplicitShapesAreNotTracked) {
  const std::string w = Register(CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB));
  v1::Result explicit_shape = Timed(0, 1000);
  explicit_shape.mutable_problem()->clear_preset();
  v1::Result failed = Timed(1, 1000);
  failed.set_status(v1::RUNTIME_ERROR);
  const std::string id = RunJob(w, {{"branch", "main"}}, {explicit_shape, failed});
  auto history = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(Verdicts(*history), std::vector<v1::Verdict>{v1::NO_BASELINE});
  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  EXPECT_TRUE(observer_.snapshot.series.empty());
}

TEST_F(CoordinatorHistoryTest, HistoryValidatesItsQuery) {
  ExpectError(coordinator_->GetHistory(HistoryQuery{}).status(), absl::StatusCode::kInvalidArgument, "op: required");
  HistoryQuery q{"rmsnorm"};
  q.dtype = static_cast<v1::Dtype>(99);
  ExpectError(coordinator_->GetHistory(q).status(), absl::StatusCode::kInvalidArgument, "dtype");
  auto empty = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->points.empty());
  EXPECT_EQ(empty->baseline_median_ns, 0);
}

// A worker whose rmsnorm derives a third dim (words = cols / 8) and takes a flag, as w4a16_gemm's
// K_words and rope's gptj: a submitted shape may leave the derived dim out, its series keeps it.
v1::WorkerInfo DerivingWorker() {
  v1::WorkerInfo w = CudaWorker("gpu", "NVIDIA H100", 9, 0, 80 * kGiB);
  v1::OpInfo* op = w.mutable_catalog(0);
  op->add_dims("words");
  v1::DerivedDim* d = op->add_derived_dims();
  d->set_name("words");
  d->set_expr("cols / 8");
  op->add_flags("fast");
  for (v1::PresetInfo& p : *op->mutable_presets())
    for (v1::Problem& pr : *p.mutable_problems()) {
      v1::Dim* words = pr.add_dims();
      words->set_name("words");
      words->set_value(pr.dims(1).value() / 8);
    }
  return w;
}

TEST_F(CoordinatorHistoryTest, HistoryAndSeriesControlsTakeShapesAsSubmitDoes) {
  const std::string w = Register(DerivingWorker());
  v1::Result r = Timed(0, 1000);
  v1::Problem* p = r.mutable_problem();
  p->clear_preset();
  v1::Dim* words = p->add_dims();
  words->set_name("words");
  words->set_value(128);
  p->add_flags("fast");
  RunJob(w, {{"branch", "main"}}, {r});
  auto all = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->points.size(), 1u);
  ASSERT_EQ(all->points[0].series.shape, "64x1024x128 fast");

  // Each form a user may type finds the series; a shape that resolves elsewhere finds nothing.
  for (const char* shape : {"64x1024x128 fast", "64x1024 fast", "64x1024,fast", "rows=64 cols=1024 fast",
                            "cols=1024,rows=64,fast", "64x1024x128,fast"}) {
    HistoryQuery q{"rmsnorm"};
    q.shape = shape;
    auto h = coordinator_->GetHistory(q);
    ASSERT_TRUE(h.ok()) << shape << ": " << h.status();
    EXPECT_EQ(h->points.size(), 1u) << shape;
  }
  for (const char* shape : {"64x1024", "64x2048 fast", "64x1024x64 fast", "64 fast", "64x1024 slow", "nonsense"}) {
    HistoryQuery q{"rmsnorm"};
    q.shape = shape;
    auto h = coordinator_->GetHistory(q);
    ASSERT_TRUE(h.ok()) << shape << ": " << h.status();
    EXPECT_TRUE(h->points.empty()) << shape;
  }

  // A mute scoped by the short form covers the series, stored in the series' own form.
  v1::SeriesControl mute;
  mute.set_kind(v1::SERIES_MUTE);
  mute.mutable_scope()->set_op("rmsnorm");
  mute.mutable_scope()->set_shape("64x1024,fast");
  auto set = coordinator_->SetSeriesControl(mute, "admin");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->scope().shape(), "64x1024x128 fast");
  auto muted = coordinator_->GetHistory(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(muted.ok());
  ASSERT_EQ(muted->points.size(), 1u);
  EXPECT_TRUE(muted->points[0].muted);
}

v1::WorkerInfo CalibratedH100(const std::string& name, double copy, double bf16) {
  v1::WorkerInfo w = CudaWorker(name, "NVIDIA H100", 9, 0, 80 * kGiB);
  v1::Calibration* c = w.add_calibrations();
  c->set_copy_bytes_per_second(copy);
  (*c->mutable_peak_flops_per_second())["bf16"] = bf16;
  (*c->mutable_peak_flops_per_second())["f32"] = 50e12;
  return w;
}

TEST_F(CoordinatorTest, SlowWorkersAreUnhealthyInListWorkersAndGauges) {
  Register(CalibratedH100("h1", 3.0e12, 700e12));
  Register(CalibratedH100("h2", 3.0e12, 700e12));
  const std::string slow = Register(CalibratedH100("h3", 2.0e12, 700e12));
  auto workers = coordinator_->ListWorkers();
  ASSERT_TRUE(workers.ok());
  for (const v1::WorkerStatus& s : *workers) {
    EXPECT_EQ(s.unhealthy(), s.info().worker_id() == slow) << s.info().name();
    if (s.unhealthy()) EXPECT_NE(s.health_reason().find("copy bandwidth"), std::string::npos) << s.health_reason();
  }
  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  const auto& ceilings = observer_.snapshot.worker_ceilings;
  ASSERT_EQ(ceilings.size(), 3u);
  const WorkerCeilingsGauge& h3 = ceilings.at({"h3", "NVIDIA H100"});
  EXPECT_TRUE(h3.unhealthy);
  EXPECT_EQ(h3.copy_bytes_per_second, 2.0e12);
  EXPECT_EQ(h3.peak_flops_per_second.at("bf16"), 700e12);
  EXPECT_FALSE(ceilings.at({"h1", "NVIDIA H100"}).unhealthy);

  // A lost worker leaves the gauges.
  clock_.AdvanceMs(4000);
  for (const v1::WorkerStatus& s : *workers)
    if (s.info().name() != "h1") ASSERT_TRUE(coordinator_->Heartbeat(s.info().worker_id()).ok());
  clock_.AdvanceMs(1500);
  ASSERT_TRUE(coordinator_->PublishSnapshot().ok());
  EXPECT_EQ(observer_.snapshot.worker_ceilings.count({"h1", "NVIDIA H100"}), 0u);
  EXPECT_EQ(observer_.snapshot.worker_ceilings.size(), 2u);
}

}  // namespace
}  // namespace kbench::server
