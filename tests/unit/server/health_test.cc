// Fleet health: a device below its model's median by more than the margin is unhealthy, per ceiling.
#include "server/coordinator/health.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kbench::server {
namespace {

v1::WorkerInfo Worker(const std::string& model, double copy, double f32, double bf16, const std::string& uuid = "") {
  v1::WorkerInfo w;
  w.set_name("node-" + uuid);
  v1::DeviceInfo* d = w.add_devices();
  d->set_name(model);
  d->set_uuid(uuid);
  v1::Calibration* c = w.add_calibrations();
  c->set_device_uuid(uuid);
  c->set_copy_bytes_per_second(copy);
  if (f32 > 0) (*c->mutable_peak_flops_per_second())["f32"] = f32;
  if (bf16 > 0) (*c->mutable_peak_flops_per_second())["bf16"] = bf16;
  return w;
}

std::vector<HealthInput> Inputs(const std::vector<v1::WorkerInfo>& workers) {
  std::vector<HealthInput> out;
  for (const auto& w : workers) out.push_back(HealthInput{&w, true});
  return out;
}

TEST(FleetHealth, SlowCopyBandwidthIsUnhealthy) {
  const std::vector<v1::WorkerInfo> fleet = {
      Worker("H100", 3.0e12, 50e12, 700e12, "a"), Worker("H100", 3.1e12, 50e12, 700e12, "b"),
      Worker("H100", 2.9e12, 50e12, 700e12, "c"), Worker("H100", 2.4e12, 50e12, 700e12, "d")};
  const auto health = AssessFleetHealth(Inputs(fleet), 0.10);
  ASSERT_EQ(health.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(health[i].unhealthy) << health[i].reason;
  EXPECT_TRUE(health[3].unhealthy);
  EXPECT_EQ(health[3].device_unhealthy, std::vector<bool>{true});
  // Median of 2.4, 2.9, 3.0, 3.1 is 2.95; 2.4 is 19% below.
  EXPECT_NE(health[3].reason.find("copy bandwidth 2.4e+12 B/s is 19% below the median 2.95e+12 B/s of 4 devices"),
            std::string::npos)
      << health[3].reason;
  // Within a looser margin it is fine.
  EXPECT_FALSE(AssessFleetHealth(Inputs(fleet), 0.20)[3].unhealthy);
}

TEST(FleetHealth, EachPeakIsJudgedAndModelsAreSeparate) {
  const std::vector<v1::WorkerInfo> fleet = {
      Worker("H100", 3e12, 50e12, 700e12, "a"), Worker("H100", 3e12, 50e12, 500e12, "b"),
      Worker("H100", 3e12, 40e12, 700e12, "c"),
      // The only A100: slow next to the H100s, but it has no peers to be judged against.
      Worker("A100", 1.5e12, 19e12, 300e12, "d")};
  const auto health = AssessFleetHealth(Inputs(fleet), 0.10);
  EXPECT_FALSE(health[0].unhealthy);
  EXPECT_TRUE(health[1].unhealthy);
  EXPECT_NE(health[1].reason.find("bf16 peak"), std::string::npos) << health[1].reason;
  EXPECT_TRUE(health[2].unhealthy);
  EXPECT_NE(health[2].reason.find("f32 peak"), std::string::npos) << health[2].reason;
  EXPECT_FALSE(health[3].unhealthy);
}

TEST(FleetHealth, LostWorkersSetNoNormButAreJudged) {
  std::vector<v1::WorkerInfo> fleet = {Worker("H100", 3e12, 0, 0, "a"), Worker("H100", 3e12, 0, 0, "b"),
                                       Worker("H100", 1e12, 0, 0, "lost-1"), Worker("H100", 1e12, 0, 0, "lost-2"),
                                       Worker("H100", 1e12, 0, 0, "lost-3")};
  std::vector<HealthInput> inputs = Inputs(fleet);
  for (int i = 2; i < 5; ++i) inputs[i].counts_for_median = false;
  const auto health = AssessFleetHealth(inputs, 0.10);
  EXPECT_FALSE(health[0].unhealthy);  // Had the lost ones counted, the median would be 1e12.
  EXPECT_TRUE(health[2].unhealthy);
}

TEST(FleetHealth, UncalibratedDevicesAreNotJudged) {
  v1::WorkerInfo bare;
  bare.add_devices()->set_name("H100");
  const std::vector<v1::WorkerInfo> fleet = {Worker("H100", 3e12, 0, 0, "a"), bare};
  const auto health = AssessFleetHealth(Inputs(fleet), 0.10);
  EXPECT_FALSE(health[1].unhealthy);
  EXPECT_EQ(CeilingsOf(bare, 0).copy_bytes_per_second, 0);
}

TEST(FleetHealth, CalibrationsAreMatchedByUuid) {
  v1::WorkerInfo w;
  for (const char* uuid : {"GPU-0", "GPU-1"}) {
    v1::DeviceInfo* d = w.add_devices();
    d->set_name("H100");
    d->set_uuid(uuid);
  }
  // Listed in the other order.
  v1::Calibration* c1 = w.add_calibrations();
  c1->set_device_uuid("GPU-1");
  c1->set_copy_bytes_per_second(1e12);
  v1::Calibration* c0 = w.add_calibrations();
  c0->set_device_uuid("GPU-0");
  c0->set_copy_bytes_per_second(3e12);
  EXPECT_EQ(CeilingsOf(w, 0).copy_bytes_per_second, 3e12);
  EXPECT_EQ(CeilingsOf(w, 1).copy_bytes_per_second, 1e12);
  const std::vector<v1::WorkerInfo> fleet = {w, Worker("H100", 3e12, 0, 0, "x")};
  const auto health = AssessFleetHealth(Inputs(fleet), 0.10);
  EXPECT_TRUE(health[0].unhealthy);
  EXPECT_EQ(health[0].device_unhealthy, (std::vector<bool>{false, true}));
  EXPECT_NE(health[0].reason.find("device 1 (H100)"), std::string::npos) << health[0].reason;
}

}  // namespace
}  // namespace kbench::server
