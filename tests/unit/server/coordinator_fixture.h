// The Coordinator tests' fixture: a fake clock, a temporary SQLite store, an observer that records
// what the coordinator reports (coordinator_test.cc, coordinator_history_test.cc).
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "fake_clock.h"
#include "fixtures.h"
#include "gtest/gtest.h"
#include "server/coordinator/coordinator.h"
#include "server/store/sqlite_store.h"

namespace kbench::server::coordinator_testing {

using testing::CpuWorker;
using testing::CudaWorker;
using testing::OkResult;
using testing::RmsnormSpec;

constexpr int64_t kGiB = int64_t{1} << 30;

// Records what the coordinator reports.
struct RecordingObserver : CoordinatorObserver {
  int submitted = 0;
  int leased = 0;
  int requeued = 0;
  std::vector<std::pair<v1::JobState, double>> finished;
  std::vector<v1::ResultStatus> results;
  FleetSnapshot snapshot;
  void JobSubmitted() override { ++submitted; }
  void JobLeased(double) override { ++leased; }
  void JobRequeued() override { ++requeued; }
  void JobFinished(v1::JobState s, double run) override { finished.emplace_back(s, run); }
  void ResultStored(v1::ResultStatus s) override { results.push_back(s); }
  void Snapshot(const FleetSnapshot& s) override { snapshot = s; }
};

class CoordinatorTest : public ::testing::Test {
 protected:
  CoordinatorTest() {
    auto store = SqliteStore::Open(testing::TempDbPath());
    EXPECT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    config_.lease_ttl = std::chrono::milliseconds(1000);
    config_.max_attempts = 3;
    config_.worker_lost_after = std::chrono::milliseconds(5000);
    coordinator_ = std::make_unique<Coordinator>(config_, store_.get(), &clock_, &observer_);
  }

  std::string Register(v1::WorkerInfo info) {
    auto r = coordinator_->RegisterWorker(std::move(info));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->worker_id : "";
  }

  std::string Submit(v1::JobSpec spec, const std::string& key = "") {
    auto r = coordinator_->Submit(std::move(spec), key);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->job_id : "";
  }

  size_t JobCount() { return coordinator_->ListJobs(1000, v1::JOB_STATE_UNSPECIFIED)->size(); }

  void ExpectError(const absl::Status& s, absl::StatusCode code, absl::string_view text) {
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find(text), absl::string_view::npos) << "expected '" << text << "' in: " << s;
  }

  FakeClock clock_;
  CoordinatorConfig config_;
  RecordingObserver observer_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
};

}  // namespace kbench::server::coordinator_testing
