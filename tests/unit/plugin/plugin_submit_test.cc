// The coordinator's side of plugin and A/B jobs: a job naming a plugin is queued only when the plugin
// is stored (and never on the baseline branch); a worker whose catalog lacks the plugin's op still
// leases it (the worker plans it against the plugin); an A/B job of the workers' own suite is checked
// against their catalog; a plugin result gets no verdict against the suite's series.
#include <filesystem>

#include "api/sha256.h"
#include "fake_clock.h"
#include "fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/coordinator/coordinator.h"
#include "server/store/plugin_store.h"
#include "server/store/sqlite_store.h"

namespace kbench::server {
namespace {

using ::testing::HasSubstr;

class PluginSubmitTest : public ::testing::Test {
 protected:
  PluginSubmitTest() {
    store_ = *SqliteStore::Open(testing::TempDbPath());
    const std::string dir = ::testing::TempDir() + "/plugins-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir);
    plugins_ = *PluginStore::Open(dir, 1 << 20);
    coordinator_ = std::make_unique<Coordinator>(CoordinatorConfig{}, store_.get(), &clock_);
    coordinator_->set_plugin_store(plugins_.get());
    worker_ = coordinator_->RegisterWorker(testing::CpuWorker("w"))->worker_id;
    auto up = *plugins_->BeginUpload();
    EXPECT_TRUE(up->Append("a plugin").ok());
    stored_ = up->Finish("")->sha256;
  }

  v1::JobSpec PluginSpec(const std::string& sha) {
    v1::JobSpec spec;
    spec.set_op("op_only_in_the_plugin");
    spec.set_plugin_sha256(sha);
    return spec;
  }

  FakeClock clock_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<PluginStore> plugins_;
  std::unique_ptr<Coordinator> coordinator_;
  std::string worker_, stored_;
};

TEST_F(PluginSubmitTest, PluginJobIsQueuedWhenStoredAndLeasedByAWorkerWithoutItsOp) {
  auto job = coordinator_->Submit(PluginSpec(stored_), "");
  ASSERT_TRUE(job.ok()) << job.status();
  auto lease = coordinator_->LeaseJob(worker_);
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_TRUE(lease->granted);
  EXPECT_EQ(lease->job.spec().plugin_sha256(), stored_);
}

TEST_F(PluginSubmitTest, UnknownPluginAndBaselineBranchAreRefused) {
  api::Sha256 h;
  h.Update("not uploaded");
  auto missing = coordinator_->Submit(PluginSpec(h.HexDigest()), "");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("upload it first"));
  v1::JobSpec on_main = PluginSpec(stored_);
  (*on_main.mutable_labels())["branch"] = "main";
  auto refused = coordinator_->Submit(on_main, "");
  EXPECT_THAT(refused.status().message(), HasSubstr("cannot be labelled branch=main"));
  auto malformed = coordinator_->Submit(PluginSpec("abc"), "");
  EXPECT_THAT(malformed.status().message(), HasSubstr("spec.plugin_sha256"));
}

TEST_F(PluginSubmitTest, AbOfTheWorkersOwnSuiteIsCheckedAgainstTheirCatalog) {
  v1::JobSpec spec;
  spec.set_op("rmsnorm");
  auto* pair = spec.mutable_ab()->add_pairs();
  pair->set_base_variant("cpu_naive");
  pair->set_head_variant("no_such_variant");
  auto bad = coordinator_->Submit(spec, "");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("spec.ab.pairs[0]: unknown variant 'no_such_variant'"));
  pair->set_head_variant("cpu_naive");
  EXPECT_TRUE(coordinator_->Submit(spec, "").ok());
  v1::JobSpec no_op;
  no_op.mutable_ab()->set_head_plugin_sha256(stored_);
  EXPECT_TRUE(coordinator_->Submit(no_op, "").ok());  // Every op both sides have: the worker decides.
}

}  // namespace
}  // namespace kbench::server
