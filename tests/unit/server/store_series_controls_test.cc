// The store's record of the admin controls of the series on both stores: each control kept as sent
// with who and when, ids increasing, listed per op in id order, and still there after a reopen.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "server/store/store.h"
#include "store_backends.h"

namespace kbench::server {
namespace {

using Backend = testing::StoreBackend;

class StoreSeriesControlsTest : public ::testing::TestWithParam<Backend> {};

v1::SeriesControl Control(const std::string& op, v1::SeriesControlKind kind, const std::string& who, int64_t at) {
  v1::SeriesControl c;
  c.set_kind(kind);
  c.mutable_scope()->set_op(op);
  c.mutable_scope()->set_gpu_model("NVIDIA H200");
  c.mutable_scope()->set_cache_mode(v1::HOT);
  c.mutable_scope()->set_hot_batch(20);
  c.set_note("driver 565");
  c.set_set_by(who);
  c.set_set_unix_ms(at);
  return c;
}

TEST_P(StoreSeriesControlsTest, ControlsAreRecordedAndListedPerOp) {
  absl::StatusOr<std::string> location = GetParam().new_location();
  ASSERT_TRUE(location.ok()) << location.status();
  auto store = GetParam().open(*location);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->ListSeriesControls("")->empty());
  v1::SeriesControl step = Control("gemm", v1::SERIES_STEP, "root", 1000);
  step.set_at_unix_ms(900);
  auto a = (*store)->InsertSeriesControl(step);
  ASSERT_TRUE(a.ok()) << a.status();
  v1::SeriesControl threshold = Control("rmsnorm", v1::SERIES_THRESHOLD, "alice", 2000);
  threshold.set_threshold(0.05);
  auto b = (*store)->InsertSeriesControl(threshold);
  ASSERT_TRUE(b.ok()) << b.status();
  auto c = (*store)->InsertSeriesControl(Control("gemm", v1::SERIES_MUTE, "bob", 3000));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_GT(a->id(), 0);
  EXPECT_GT(b->id(), a->id());
  EXPECT_GT(c->id(), b->id());

  store->reset();
  store = GetParam().open(*location);  // Durable: read back after a reopen.
  ASSERT_TRUE(store.ok()) << store.status();
  auto gemm = (*store)->ListSeriesControls("gemm");
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  ASSERT_EQ(gemm->size(), 2u);
  EXPECT_EQ((*gemm)[0].id(), a->id());
  EXPECT_EQ((*gemm)[0].kind(), v1::SERIES_STEP);
  EXPECT_EQ((*gemm)[0].at_unix_ms(), 900);
  EXPECT_EQ((*gemm)[0].set_by(), "root");
  EXPECT_EQ((*gemm)[0].set_unix_ms(), 1000);
  EXPECT_EQ((*gemm)[0].note(), "driver 565");
  EXPECT_EQ((*gemm)[0].scope().hot_batch(), 20);
  EXPECT_EQ((*gemm)[0].scope().cache_mode(), v1::HOT);
  EXPECT_EQ((*gemm)[1].kind(), v1::SERIES_MUTE);
  EXPECT_EQ((*gemm)[1].set_by(), "bob");
  auto all = (*store)->ListSeriesControls("");
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[1].scope().op(), "rmsnorm");
  EXPECT_DOUBLE_EQ((*all)[1].threshold(), 0.05);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreSeriesControlsTest,
                         ::testing::Values(testing::SqliteBackend(), testing::PostgresBackend()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kbench::server
