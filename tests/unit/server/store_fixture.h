// The Store contract tests' fixtures (store_test.cc: jobs, leases, workers; store_series_test.cc:
// results, baselines, history, series), instantiated per backend: SQLite on a temporary file, and
// PostgreSQL on a fresh database of a real server the tests start (postgres_fixture.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

#include "fixtures.h"
#include "gtest/gtest.h"
#include "postgres_fixture.h"
#include "server/store/postgres_store.h"
#include "server/store/sqlite_store.h"
#include "server/store/store.h"
#include "store_backends.h"

namespace kbench::server::store_testing {

using testing::OkResult;
using testing::RmsnormSpec;

using Backend = testing::StoreBackend;

constexpr int64_t kT0 = 1'700'000'000'000;
constexpr int64_t kTtl = 1000;

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> location = GetParam().new_location();
    ASSERT_TRUE(location.ok()) << location.status();
    location_ = *location;
    Reopen();
  }

  void Reopen() {
    store_.reset();
    auto s = GetParam().open(location_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
  }

  v1::Job Insert(const std::string& id, int64_t created_ms, const std::string& key = "",
                 v1::JobSpec spec = RmsnormSpec()) {
    v1::Job job;
    job.set_job_id(id);
    job.set_state(v1::QUEUED);
    job.set_created_unix_ms(created_ms);
    job.set_idempotency_key(key);
    *job.mutable_spec() = std::move(spec);
    auto r = store_->InsertJob(job);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->job : v1::Job();
  }

  std::optional<Lease> LeaseAny(const std::string& worker, int64_t now, const std::string& lease_id) {
    auto r = store_->LeaseNextJob(worker, [](const v1::JobSpec&) { return true; }, now, kTtl, lease_id);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : std::nullopt;
  }

  void Register(const std::string& worker_id, int64_t now = kT0) {
    v1::WorkerInfo info = testing::CpuWorker(worker_id);
    info.set_worker_id(worker_id);
    ASSERT_TRUE(store_->UpsertWorker(info, now).ok());
  }

  std::string location_;
  std::unique_ptr<Store> store_;
};

// A result of one series point: rmsnorm on the small preset's shape, f32.
inline v1::Result SeriesResult(int index, const std::string& variant, const std::string& gpu, int64_t finished_ms,
                        std::vector<double> samples, v1::ResultStatus status = v1::OK) {
  v1::Result r = OkResult(index, 0);
  r.set_variant(variant);
  r.set_status(status);
  r.set_finished_unix_ms(finished_ms);
  r.mutable_problem()->set_preset("small");
  r.mutable_device()->set_name(gpu);
  for (double d : samples) r.mutable_timing()->add_samples_ns(d);
  r.mutable_timing()->set_median_ns(samples.empty() ? 0 : samples[samples.size() / 2]);
  v1::RooflineCeiling* c = r.mutable_roofline()->add_ceilings();
  c->set_source("calibrated");
  c->set_utilization(0.5);
  return r;
}

class StoreSeriesTest : public StoreTest {
 protected:
  // Submits, leases, reports and completes one job with the given labels and results.
  void RunJob(const std::string& id, int64_t at_ms, std::map<std::string, std::string> labels,
              const std::vector<v1::Result>& results, const std::vector<ResultVerdict>& verdicts = {}) {
    v1::JobSpec spec = RmsnormSpec();
    for (const auto& [k, v] : labels) (*spec.mutable_labels())[k] = v;
    Insert(id, at_ms, "", spec);
    auto lease = LeaseAny("w-1", at_ms, "l-" + id);
    ASSERT_TRUE(lease.has_value());
    ASSERT_EQ(lease->job.job_id(), id);
    auto added = store_->AppendResults("l-" + id, at_ms + 1, kTtl, nullptr, results, verdicts);
    ASSERT_TRUE(added.ok()) << added.status();
    ASSERT_TRUE(store_->CompleteJob("l-" + id, at_ms + 2, false, "").ok());
  }

  const SeriesKey kNaiveH100{"rmsnorm", "cpu_naive", "64x1024", v1::DTYPE_F32, "NVIDIA H100"};
};

}  // namespace kbench::server::store_testing
