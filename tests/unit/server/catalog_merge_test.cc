// The fleet's catalog merged once per distinct catalog (server/coordinator/catalog.h, fleet_cache.h):
// the result must equal the plain merge over every worker, for fleets whose catalogs share op names
// but differ in variants, presets, flags or contract, in any order; a worker whose catalog changes
// must be merged again. Fails if the dedup key misses part of a catalog or the order of first
// appearance is lost.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "fixtures.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/coordinator/catalog.h"
#include "server/coordinator/fleet_cache.h"

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
  const std::vector<std::vector<v1::OpInfo>> catalogs = Catalogs();
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

}  // namespace
}  // namespace kbench::server
