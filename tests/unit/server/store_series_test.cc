// The Store contract for the history: results with their series and verdicts, baselines, the pinned
// reference, history queries and series points, per backend (fixtures: store_fixture.h).
#include "store_fixture.h"

namespace kbench::server {
namespace {

using namespace store_testing;  // NOLINT: the fixtures (store_fixture.h)
using testing::OkResult;
using testing::RmsnormSpec;

TEST_P(StoreSeriesTest, ResultsKeepTheirSeriesVerdictAndSamples) {
  ResultVerdict verdict{v1::SLOWER, 0.05, 0.001, 1000.0, /*tracked=*/true};
  RunJob("j-1", kT0, {{"branch", "main"}, {"git_sha", "abc123"}},
         {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 50, {1050, 1040, 1060})}, {verdict});

  auto history = store_->History(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 1u);
  const HistoryRow& h = (*history)[0];
  EXPECT_EQ(h.series, kNaiveH100);
  EXPECT_EQ(h.job_id, "j-1");
  EXPECT_EQ(h.finished_unix_ms, kT0 + 50);
  EXPECT_DOUBLE_EQ(h.median_ns, 1040);
  EXPECT_DOUBLE_EQ(h.utilization, 0.5);
  EXPECT_EQ(h.verdict.verdict, v1::SLOWER);
  EXPECT_DOUBLE_EQ(h.verdict.change_fraction, 0.05);
  EXPECT_DOUBLE_EQ(h.verdict.p_value, 0.001);
  EXPECT_DOUBLE_EQ(h.verdict.baseline_median_ns, 1000.0);
  EXPECT_EQ(h.branch, "main");
  EXPECT_EQ(h.git_sha, "abc123");

  auto series = store_->ListSeries();
  ASSERT_TRUE(series.ok()) << series.status();
  ASSERT_EQ(series->size(), 1u);
  EXPECT_EQ((*series)[0].series, kNaiveH100);
  EXPECT_EQ((*series)[0].verdict, v1::SLOWER);
  EXPECT_DOUBLE_EQ((*series)[0].median_ns, 1040);

  // Samples are stored apart from the message and come back only when asked for, in order.
  auto with = store_->GetResults("j-1", true);
  ASSERT_TRUE(with.ok());
  ASSERT_EQ((*with)[0].timing().samples_ns_size(), 3);
  EXPECT_DOUBLE_EQ((*with)[0].timing().samples_ns(0), 1050);
  EXPECT_DOUBLE_EQ((*with)[0].timing().samples_ns(1), 1040);
  EXPECT_DOUBLE_EQ((*with)[0].timing().samples_ns(2), 1060);
  EXPECT_EQ(store_->GetResults("j-1", false)->at(0).timing().samples_ns_size(), 0);
}

TEST_P(StoreSeriesTest, VerdictsMustMatchTheResults) {
  Insert("j-1", kT0);
  ASSERT_TRUE(LeaseAny("w-1", kT0, "l-1").has_value());
  auto added = store_->AppendResults("l-1", kT0 + 1, kTtl, nullptr, {OkResult(0), OkResult(1)}, {ResultVerdict{}});
  EXPECT_EQ(added.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(store_->GetResults("j-1", false)->empty());
}

TEST_P(StoreSeriesTest, BaselineIsTheNewestOkResultsOnTheBranch) {
  const std::map<std::string, std::string> main{{"branch", "main"}};
  RunJob("j-old", kT0, main, {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 10, {100, 101})});
  RunJob("j-mid", kT0 + 100, main, {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 110, {200, 201})});
  RunJob("j-new", kT0 + 200, main, {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 210, {300, 301})});
  // None of these belongs to the baseline: another branch, another GPU, another variant, not OK.
  RunJob("j-pr", kT0 + 300, {{"branch", "feature"}},
         {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 310, {400})});
  RunJob("j-a100", kT0 + 400, main, {SeriesResult(0, "cpu_naive", "NVIDIA A100", kT0 + 410, {500})});
  RunJob("j-var", kT0 + 500, main, {SeriesResult(0, "cpu_blocked", "NVIDIA H100", kT0 + 510, {600})});
  RunJob("j-bad", kT0 + 600, main,
         {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 610, {700}, v1::INCORRECT)});

  auto baseline = store_->BaselineResults(kNaiveH100, "main", 2, "");
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  ASSERT_EQ(baseline->size(), 2u);
  EXPECT_EQ((*baseline)[0].job_id, "j-new");
  EXPECT_EQ((*baseline)[0].samples_ns, (std::vector<double>{300, 301}));
  EXPECT_DOUBLE_EQ((*baseline)[0].median_ns, 301);
  EXPECT_EQ((*baseline)[1].job_id, "j-mid");

  // A job is never its own baseline.
  baseline = store_->BaselineResults(kNaiveH100, "main", 10, "j-new");
  ASSERT_TRUE(baseline.ok());
  ASSERT_EQ(baseline->size(), 2u);
  EXPECT_EQ((*baseline)[0].job_id, "j-mid");
  EXPECT_EQ((*baseline)[1].job_id, "j-old");
  EXPECT_TRUE(store_->BaselineResults(kNaiveH100, "release", 10, "")->empty());
}

TEST_P(StoreSeriesTest, ReferenceIsTheOldestOkResultsOnTheBranch) {
  const std::map<std::string, std::string> main{{"branch", "main"}};
  // Stored out of finishing order: the reference goes by finished time, oldest first.
  RunJob("j-mid", kT0, main, {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 110, {200, 201})});
  RunJob("j-old", kT0 + 100, main, {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 10, {100, 101})});
  RunJob("j-new", kT0 + 200, main, {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 210, {300, 301})});
  RunJob("j-pr", kT0 + 300, {{"branch", "feature"}}, {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 5, {400})});
  RunJob("j-bad", kT0 + 600, main, {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 1, {700}, v1::INCORRECT)});

  auto reference = store_->ReferenceResults(kNaiveH100, "main", 2, "");
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_EQ(reference->size(), 2u);
  EXPECT_EQ((*reference)[0].job_id, "j-old");
  EXPECT_DOUBLE_EQ((*reference)[0].median_ns, 101);
  EXPECT_TRUE((*reference)[0].samples_omitted);
  EXPECT_TRUE((*reference)[0].samples_ns.empty());
  EXPECT_EQ((*reference)[1].job_id, "j-mid");
  reference = store_->ReferenceResults(kNaiveH100, "main", 10, "j-old");
  ASSERT_TRUE(reference.ok());
  ASSERT_EQ(reference->size(), 2u);
  EXPECT_EQ((*reference)[0].job_id, "j-mid");
  EXPECT_EQ((*reference)[1].job_id, "j-new");
  EXPECT_TRUE(store_->ReferenceResults(kNaiveH100, "release", 10, "")->empty());
}

TEST_P(StoreSeriesTest, BaselineRowsNameTheirStoredVersion) {
  Insert("j-1", kT0, "", [] {
    v1::JobSpec spec = RmsnormSpec();
    (*spec.mutable_labels())["branch"] = "main";
    return spec;
  }());
  ASSERT_TRUE(LeaseAny("w-1", kT0, "l-1").has_value());
  ASSERT_TRUE(store_->AppendResults("l-1", kT0 + 1, kTtl, nullptr,
                                    {SeriesResult(3, "cpu_naive", "NVIDIA H100", kT0 + 10, {200, 100})}, {})
                  .ok());
  auto first = store_->BaselineResults(kNaiveH100, "main", 10, "");
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].job_id, "j-1");
  EXPECT_EQ((*first)[0].attempt, 1);
  EXPECT_EQ((*first)[0].index, 3);
  EXPECT_FALSE((*first)[0].samples_omitted);
  EXPECT_EQ((*first)[0].samples_ns, (std::vector<double>{100, 200}));

  // The caller that holds a version's samples gets the row without them.
  std::vector<BaselineResult> asked;
  auto held = store_->BaselineResults(kNaiveH100, "main", 10, "", [&](const BaselineResult& row) {
    asked.push_back(row);
    return true;
  });
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_EQ(held->size(), 1u);
  EXPECT_TRUE((*held)[0].samples_omitted);
  EXPECT_TRUE((*held)[0].samples_ns.empty());
  EXPECT_DOUBLE_EQ((*held)[0].median_ns, (*first)[0].median_ns);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].job_id, "j-1");
  EXPECT_EQ(asked[0].index, 3);
  EXPECT_EQ(asked[0].revision, (*first)[0].revision);

  // The same result sent again with other samples is a new version.
  ASSERT_TRUE(store_->AppendResults("l-1", kT0 + 2, kTtl, nullptr,
                                    {SeriesResult(3, "cpu_naive", "NVIDIA H100", kT0 + 10, {300, 400})}, {})
                  .ok());
  auto second = store_->BaselineResults(kNaiveH100, "main", 10, "", [](const BaselineResult&) { return false; });
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].index, 3);
  EXPECT_NE((*second)[0].revision, (*first)[0].revision);
  EXPECT_EQ((*second)[0].samples_ns, (std::vector<double>{300, 400}));
}

TEST_P(StoreSeriesTest, HistoryFiltersNewestFirst) {
  RunJob("j-1", kT0, {{"branch", "main"}},
         {SeriesResult(0, "cpu_naive", "NVIDIA H100 80GB HBM3", kT0 + 10, {100}),
          SeriesResult(1, "cpu_blocked", "NVIDIA H100 80GB HBM3", kT0 + 11, {90}),
          SeriesResult(2, "cpu_naive", "NVIDIA A100-SXM4-80GB", kT0 + 12, {150}),
          SeriesResult(3, "cpu_naive", "NVIDIA H100 80GB HBM3", kT0 + 13, {1}, v1::TIMEOUT)});
  RunJob("j-2", kT0 + 100, {{"branch", "pr-7"}},
         {SeriesResult(0, "cpu_naive", "NVIDIA H100 80GB HBM3", kT0 + 110, {105})});

  auto all = store_->History(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 4u);  // The TIMEOUT is no point of history.
  EXPECT_EQ((*all)[0].job_id, "j-2");
  EXPECT_EQ((*all)[0].branch, "pr-7");
  EXPECT_EQ((*all)[1].series.gpu_model, "NVIDIA A100-SXM4-80GB");

  HistoryQuery q{"rmsnorm", "cpu_naive", "h100"};  // Case-insensitive substring of the device name.
  auto h100 = store_->History(q);
  ASSERT_TRUE(h100.ok());
  ASSERT_EQ(h100->size(), 2u);
  EXPECT_DOUBLE_EQ((*h100)[0].median_ns, 105);
  EXPECT_DOUBLE_EQ((*h100)[1].median_ns, 100);
  q.limit = 1;
  EXPECT_EQ(store_->History(q)->size(), 1u);
  q = HistoryQuery{"rmsnorm"};
  q.shape = "64x1024";
  q.dtype = v1::DTYPE_F32;
  EXPECT_EQ(store_->History(q)->size(), 4u);
  q.shape = "8x8";
  EXPECT_TRUE(store_->History(q)->empty());
  q = HistoryQuery{"rmsnorm"};
  q.dtype = v1::DTYPE_BF16;
  EXPECT_TRUE(store_->History(q)->empty());
  EXPECT_TRUE(store_->History(HistoryQuery{"softmax"})->empty());
}

TEST_P(StoreSeriesTest, SeriesKeepTheirNewestTrackedPoint) {
  const ResultVerdict tracked{v1::SAME, 0, 0.5, 100, true};
  const ResultVerdict slower{v1::SLOWER, 0.2, 1e-9, 100, true};
  RunJob("j-new", kT0, {{"branch", "main"}}, {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 500, {120})},
         {slower});
  // Reported later but finished earlier (a slow worker): it does not replace the newer point.
  RunJob("j-old", kT0 + 100, {{"branch", "main"}}, {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 50, {100})},
         {tracked});
  // Untracked results (another branch, explicit shapes) make no series.
  RunJob("j-pr", kT0 + 200, {{"branch", "pr"}}, {SeriesResult(0, "cpu_blocked", "NVIDIA H100", kT0 + 600, {90})},
         {ResultVerdict{v1::FASTER, -0.1, 1e-6, 100, false}});
  auto series = store_->ListSeries();
  ASSERT_TRUE(series.ok()) << series.status();
  ASSERT_EQ(series->size(), 1u);
  EXPECT_EQ((*series)[0].job_id, "j-new");
  EXPECT_EQ((*series)[0].verdict, v1::SLOWER);
  EXPECT_DOUBLE_EQ((*series)[0].utilization, 0.5);
  // A newer tracked point replaces it.
  RunJob("j-next", kT0 + 300, {{"branch", "main"}},
         {SeriesResult(0, "cpu_naive", "NVIDIA H100", kT0 + 700, {101})}, {tracked});
  series = store_->ListSeries();
  ASSERT_EQ(series->size(), 1u);
  EXPECT_EQ((*series)[0].job_id, "j-next");
  EXPECT_EQ((*series)[0].verdict, v1::SAME);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreSeriesTest, ::testing::Values(testing::SqliteBackend(), testing::PostgresBackend()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kbench::server
