// The fleet's catalog merged once per distinct catalog (server/coordinator/catalog.h, fleet_cache.h):
// the result must equal the plain merge over every worker, for fleets whose catalogs share op names
// but differ in variants, presets, flags or contract, in any order; a worker whose catalog changes
// must be merged again; each op keeps the largest memory of the admitted devices that have it. Fails
// if the dedup key misses part of a catalog, the order of first appearance is lost, or the memory
// comes from a worker without the op or a device the selector does not admit.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "fixtures.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/coordinator/catalog.h"
#include "server/coordinator/fleet_cache.h"
#include "server/coordinator/matching.h"

namespace kbench::server {
namespace {

using testing::CpuWorker;

// Four catalogs with the same op names and different contents.
std::vector<std::vector<v1::OpInfo>> Catalogs() {
  v1::OpInfo base = testing::RmsnormOp();
  v1::OpInfo more_variants = base;  // An extra variant, and the existing two in the other order.
  more_variants.mutable_variants()->SwapElements(0, 1);
  more_variants.add_variants()->set_name("cpu_fast");
  v1::OpInfo with_contract = base;
  with_contract.mutable_contract()->set_entry("kbench_rmsnorm");
  with_contract.add_flags("causal");
  v1::OpInfo other_preset = base;
  other_preset.mutable_presets(0)->set_name("tiny");
  other_preset.set_description("from another build");
  return {{base}, {more_variants, testing::VectorAddOp()}, {with_contract}, {testing::VectorAddOp(), other_preset}};
}

// The four, and a newer build's: a dim a shape may leave out, one that may be 0.
std::vector<std::vector<v1::OpInfo>> CatalogsWithDerivedDims() {
  std::vector<std::vector<v1::OpInfo>> out = Catalogs();
  v1::OpInfo with_derived = testing::RmsnormOp();
  auto* d = with_derived.add_derived_dims();
  d->set_name("cols");
  d->set_expr("rows * 2");
  with_derived.add_zero_dims("rows");
  out.push_back({with_derived});
  return out;
}

v1::WorkerInfo WorkerWith(const std::string& name, const std::vector<v1::OpInfo>& catalog) {
  v1::WorkerInfo w = CpuWorker(name);
  w.set_worker_id("w-" + name);
  w.mutable_devices(0)->set_uuid("cpu-" + name);  // Workers differ beyond their catalogs.
  w.clear_catalog();
  for (const v1::OpInfo& op : catalog) *w.add_catalog() = op;
  return w;
}

void ExpectSameCatalog(const std::vector<v1::OpInfo>& got, const std::vector<v1::OpInfo>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got[i], want[i]))
        << "op " << i << ":\n" << got[i].DebugString() << "\nwant:\n" << want[i].DebugString();
}

std::vector<const v1::WorkerInfo*> Pointers(const std::vector<WorkerRecord>& records) {
  std::vector<const v1::WorkerInfo*> out;
  for (const WorkerRecord& r : records) out.push_back(&r.info);
  return out;
}

TEST(CatalogMergeTest, MergingEachDistinctCatalogOnceEqualsTheFullMergeInAnyOrder) {
  const std::vector<std::vector<v1::OpInfo>> catalogs = CatalogsWithDerivedDims();
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<WorkerRecord> records;
    for (int i = 0; i < 40; ++i)
      records.push_back({WorkerWith(std::to_string(i), catalogs[rng() % catalogs.size()])});
    std::shuffle(records.begin(), records.end(), rng);
    const std::vector<v1::OpInfo> full = MergeCatalogs(Pointers(records));
    ExpectSameCatalog(MergeDistinctCatalogs(Pointers(records)), full);
    const Fleet fleet(records);
    EXPECT_LE(fleet.distinct_catalogs(), catalogs.size());
    ExpectSameCatalog(fleet.Admit(v1::GpuSelector())->catalog, full);
    if (HasFailure()) return;
  }
}

TEST(CatalogMergeTest, DerivedAndZeroDimsComeFromAnyWorkerThatHasThem) {
  const std::vector<std::vector<v1::OpInfo>> catalogs = CatalogsWithDerivedDims();
  const v1::WorkerInfo older = WorkerWith("old", catalogs[0]), newer = WorkerWith("new", catalogs[4]);
  for (const auto& order : {std::vector{&older, &newer}, std::vector{&newer, &older}}) {
    const std::vector<v1::OpInfo> merged = MergeCatalogs(order);
    ASSERT_EQ(merged.size(), 1u);
    ASSERT_EQ(merged[0].derived_dims_size(), 1);
    EXPECT_EQ(merged[0].derived_dims(0).expr(), "rows * 2");
    ASSERT_EQ(merged[0].zero_dims_size(), 1);
    EXPECT_EQ(merged[0].zero_dims(0), "rows");
  }
  EXPECT_EQ(MergeCatalogs({&older}).at(0).derived_dims_size(), 0);
}

TEST(CatalogMergeTest, WorkersAreGroupedByTheirWholeCatalog) {
  const std::vector<std::vector<v1::OpInfo>> catalogs = Catalogs();
  std::vector<WorkerRecord> records;
  for (int i = 0; i < 12; ++i) records.push_back({WorkerWith(std::to_string(i), catalogs[i % catalogs.size()])});
  EXPECT_EQ(Fleet(records).distinct_catalogs(), catalogs.size());
  EXPECT_EQ(CatalogKey(records[0].info), CatalogKey(records[4].info));  // Same catalog, other worker.
  EXPECT_NE(CatalogKey(records[0].info), CatalogKey(records[1].info));
}

TEST(CatalogMergeTest, OnlyTheAdmittedWorkersCatalogsAreMerged) {
  const std::vector<std::vector<v1::OpInfo>> catalogs = Catalogs();
  std::vector<WorkerRecord> records;
  for (int i = 0; i < 8; ++i) {
    records.push_back({WorkerWith(std::to_string(i), catalogs[i % catalogs.size()])});
    if (i % 2 == 1) (*records.back().info.mutable_labels())["pool"] = "odd";
  }
  v1::GpuSelector odd;
  (*odd.mutable_labels())["pool"] = "odd";
  const Fleet fleet(records);
  std::shared_ptr<const Fleet::Admitted> admitted = fleet.Admit(odd);
  ASSERT_EQ(admitted->matching.size(), 4u);
  ExpectSameCatalog(admitted->catalog, MergeCatalogs(admitted->matching));
  // The even workers' contract (catalog 2) is not among the odd ones'.
  ASSERT_FALSE(admitted->catalog.empty());
  EXPECT_FALSE(admitted->catalog[0].has_contract());
}

TEST(CatalogMergeTest, AWorkerWhoseCatalogChangedIsMergedAgain) {
  // A hundred workers of one build, then one of them comes back with an extra variant (the same op
  // names and sizes otherwise): the next view's merge has it.
  const v1::OpInfo base = testing::RmsnormOp();
  std::vector<WorkerRecord> records;
  for (int i = 0; i < 100; ++i) records.push_back({WorkerWith(std::to_string(i), {base})});
  const Fleet before(records);
  ASSERT_EQ(before.distinct_catalogs(), 1u);
  ASSERT_EQ(before.Admit(v1::GpuSelector())->catalog.at(0).variants_size(), 2);

  v1::OpInfo changed = base;
  changed.mutable_variants(1)->set_name("cpu_blockd");  // One byte shorter; every op name the same.
  records[57].info = WorkerWith("57", {changed});
  const Fleet after(records);
  EXPECT_EQ(after.distinct_catalogs(), 2u);
  const std::vector<v1::OpInfo> merged = after.Admit(v1::GpuSelector())->catalog;
  ExpectSameCatalog(merged, MergeCatalogs(Pointers(records)));
  ASSERT_EQ(merged.at(0).variants_size(), 3);
  EXPECT_EQ(merged[0].variants(2).name(), "cpu_blockd");
}

TEST(CatalogMergeTest, EachOpKeepsTheLargestAdmittedMemoryOfTheWorkersThatHaveIt) {
  // vector_add only on the small devices, rmsnorm on all; the selector admits H100s only, one of
  // which (the largest device of all) lacks vector_add.
  std::vector<WorkerRecord> records;
  auto add = [&](const std::string& name, const std::string& model, int64_t gib, bool vector_add) {
    v1::WorkerInfo w = testing::CudaWorker(name, model, 9, 0, gib << 30);
    w.set_worker_id("w-" + name);
    w.clear_catalog();
    *w.add_catalog() = testing::RmsnormOp();
    if (vector_add) *w.add_catalog() = testing::VectorAddOp();
    records.push_back({w});
  };
  add("a", "NVIDIA H100 80GB", 80, true);
  add("b", "NVIDIA H100 96GB", 96, false);
  add("c", "NVIDIA A100", 40, true);
  add("d", "NVIDIA H100 64GB", 64, true);
  v1::GpuSelector h100;
  h100.set_model("H100");
  const Fleet fleet(records);  // Outlives admitted, which points into it.
  std::shared_ptr<const Fleet::Admitted> admitted = fleet.Admit(h100);
  ASSERT_EQ(admitted->matching.size(), 3u);
  for (const char* op : {"rmsnorm", "vector_add"}) {
    std::vector<const v1::WorkerInfo*> with_op;
    for (const v1::WorkerInfo* w : admitted->matching)
      for (const v1::OpInfo& o : w->catalog())
        if (o.name() == op) with_op.push_back(w);
    ASSERT_TRUE(admitted->memory_by_op.count(op)) << op;
    EXPECT_EQ(admitted->memory_by_op.at(op), MaxMatchingMemoryBytes(h100, with_op)) << op;
  }
  EXPECT_EQ(admitted->memory_by_op.at("rmsnorm"), int64_t{96} << 30);
  EXPECT_EQ(admitted->memory_by_op.at("vector_add"), int64_t{80} << 30);
}

}  // namespace
}  // namespace kbench::server
