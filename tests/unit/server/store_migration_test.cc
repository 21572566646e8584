// Schema version 3 (the series key's cache mode, hot batch and backend) on both stores: a database
// as a version-2 coordinator left it, with old rows, is migrated on open; the rows are kept and given
// the values they implied (COLD with batch 1; a " hot" shape suffix becomes HOT with the suffix
// dropped and the batch of its stored result; the backend of the stored result, or unreported when
// the message does not parse), and new results join the migrated series.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "server/store/store.h"
#include "store_backends.h"

namespace kbench::server {
namespace {

using Backend = testing::StoreBackend;

constexpr int64_t kT0 = 1'700'000'000'000;

v1::Result Stored(v1::CacheMode mode, int batch, double median_ns) {
  v1::Result r = testing::OkResult(0, 0);
  r.set_variant("cpu_naive");
  r.mutable_problem()->set_preset("small");
  r.mutable_device()->set_name("NVIDIA H100");
  r.mutable_device()->set_backend(v1::BACKEND_CUDA);
  r.mutable_timing()->set_cache_mode(mode);
  r.mutable_timing()->set_launches_per_sample(batch);
  r.mutable_timing()->set_median_ns(median_ns);
  return r;
}

class StoreMigrationTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> location = GetParam().new_location();
    ASSERT_TRUE(location.ok()) << location.status();
    location_ = *location;
  }

  void Seed(const std::string& sql, const std::string& blob) {
    absl::Status s = GetParam().seed_old(location_, 2, sql, blob);
    ASSERT_TRUE(s.ok()) << s << "\n" << sql;
  }

  // A version-2 results row (its series columns as version 2 wrote them).
  void SeedResult(const std::string& job, const std::string& shape, int64_t finished_ms, double median_ns,
                  const std::string& message) {
    Seed(absl::StrCat("INSERT INTO jobs (job_id, spec, state, created_ms) VALUES ('", job, "', ?1, ",
                      int{v1::SUCCEEDED}, ", ", finished_ms, ")"),
         testing::RmsnormSpec().SerializeAsString());
    Seed(absl::StrCat("INSERT INTO results (job_id, attempt, idx, op, variant, problem_label, dtype, status, "
                      "median_ns, result, shape, gpu_model, branch, finished_ms) VALUES ('",
                      job, "', 1, 0, 'rmsnorm', 'cpu_naive', 'small', ", int{v1::DTYPE_F32}, ", ", int{v1::OK},
                      ", ", median_ns, ", ?1, '", shape, "', 'NVIDIA H100', 'main', ", finished_ms, ")"),
         message);
  }

  std::string location_;
};

TEST_P(StoreMigrationTest, OldRowsAreKeptWithTheValuesTheyImplied) {
  SeedResult("j-cold", "64x1024", kT0, 1000, Stored(v1::COLD, 1, 1000).SerializeAsString());
  SeedResult("j-hot", "64x1024 hot", kT0 + 10, 500, Stored(v1::HOT, 20, 500).SerializeAsString());
  SeedResult("j-lost", "64x1024", kT0 + 20, 1001, "\xff\xff not a message");
  for (const auto& [job, shape] : {std::pair{"j-cold", "64x1024"}, std::pair{"j-hot", "64x1024 hot"}})
    Seed(absl::StrCat("INSERT INTO series (op, variant, shape, dtype, gpu_model, job_id, finished_ms, median_ns, "
                      "verdict) SELECT 'rmsnorm', 'cpu_naive', '", shape, "', ", int{v1::DTYPE_F32},
                      ", 'NVIDIA H100', '", job, "', 1, 1, 0 WHERE length(?1) = 0"),
         "");

  auto store = GetParam().open(location_);  // Migrates to the current version.
  ASSERT_TRUE(store.ok()) << store.status();
  auto history = (*store)->History(HistoryQuery{"rmsnorm"});
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 3u);
  const SeriesKey cold{"rmsnorm", "cpu_naive", "64x1024", v1::DTYPE_F32, "NVIDIA H100", v1::COLD, 1, v1::BACKEND_CUDA};
  SeriesKey hot = cold;
  hot.cache_mode = v1::HOT;
  hot.hot_batch = 20;
  SeriesKey lost = cold;
  lost.backend = v1::BACKEND_UNSPECIFIED;  // The documented default when the stored message does not parse.
  EXPECT_EQ((*history)[0].job_id, "j-lost");
  EXPECT_EQ((*history)[0].series, lost);
  EXPECT_EQ((*history)[1].job_id, "j-hot");
  EXPECT_EQ((*history)[1].series, hot);
  EXPECT_EQ((*history)[2].job_id, "j-cold");
  EXPECT_EQ((*history)[2].series, cold);

  // Each baseline holds its own mode's rows only.
  auto cold_base = (*store)->BaselineResults(cold, "main", 10, "");
  ASSERT_TRUE(cold_base.ok()) << cold_base.status();
  ASSERT_EQ(cold_base->size(), 1u);
  EXPECT_EQ((*cold_base)[0].job_id, "j-cold");
  auto hot_ref = (*store)->ReferenceResults(hot, "main", 10, "");
  ASSERT_TRUE(hot_ref.ok()) << hot_ref.status();
  ASSERT_EQ(hot_ref->size(), 1u);
  EXPECT_EQ((*hot_ref)[0].job_id, "j-hot");

  auto series = (*store)->ListSeries();
  ASSERT_TRUE(series.ok()) << series.status();
  ASSERT_EQ(series->size(), 2u);
  EXPECT_EQ((*series)[0].series, cold);
  EXPECT_EQ((*series)[1].series, hot);

  // A new HOT result of batch 20 joins the migrated hot series (and its point), not a new one.
  v1::Job job;
  job.set_job_id("j-new");
  job.set_state(v1::QUEUED);
  job.set_created_unix_ms(kT0 + 100);
  *job.mutable_spec() = testing::RmsnormSpec();
  (*job.mutable_spec()->mutable_labels())["branch"] = "main";
  ASSERT_TRUE((*store)->InsertJob(job).ok());
  auto lease = (*store)->LeaseNextJob("w", [](const v1::JobSpec&) { return true; }, kT0 + 100, 1000, "l-new");
  ASSERT_TRUE(lease.ok() && lease->has_value()) << lease.status();
  v1::Result r = Stored(v1::HOT, 20, 510);
  r.set_finished_unix_ms(kT0 + 101);
  ASSERT_TRUE((*store)->AppendResults("l-new", kT0 + 101, 1000, nullptr, {r},
                                      {ResultVerdict{v1::SAME, 0.02, 0.5, 500, /*tracked=*/true}})
                  .ok());
  auto hot_base = (*store)->BaselineResults(hot, "main", 10, "");
  ASSERT_TRUE(hot_base.ok()) << hot_base.status();
  EXPECT_EQ(hot_base->size(), 2u);
  series = (*store)->ListSeries();
  ASSERT_TRUE(series.ok()) << series.status();
  ASSERT_EQ(series->size(), 2u);
  EXPECT_EQ((*series)[1].job_id, "j-new");
  EXPECT_EQ((*series)[1].series, hot);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreMigrationTest,
                         ::testing::Values(testing::SqliteBackend(), testing::PostgresBackend()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kbench::server
