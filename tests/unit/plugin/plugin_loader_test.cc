// The plugin ABI: two builds loaded side by side each run their own code; an incompatible ABI
// version or type layout, and a library without the entry point, are refused with clear messages;
// the runner's own library loads through the same entry point.
#include "plugin/plugin_loader.h"
#include "plugin/plugin_layout.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench::kernels::plugin {
namespace {

using ::testing::HasSubstr;

// Runs `variant` of plugin_probe from `registry` on 8 elements; returns the output.
std::vector<float> RunProbe(const Registry& registry, const std::string& variant) {
  const OpDef* op = registry.Find("plugin_probe");
  EXPECT_NE(op, nullptr);
  if (op == nullptr) return {};
  const Variant* v = op->find_variant(variant);
  EXPECT_NE(v, nullptr);
  std::vector<float> x(8, 3.0f), out(8, -1.0f);
  const Tensor t[2] = {{x.data(), 8, Dtype::kF32}, {out.data(), 8, Dtype::kF32}};
  v->run_cpu(MakeProblem(*op, {8}, Dtype::kF32), t);
  return out;
}

TEST(PluginLoader, TwoBuildsSideBySideRunTheirOwnCode) {
  auto base = LoadedPlugin::Open(KBENCH_TEST_PLUGIN_BASE);
  ASSERT_TRUE(base.ok()) << base.status();
  auto head = LoadedPlugin::Open(KBENCH_TEST_PLUGIN_HEAD);
  ASSERT_TRUE(head.ok()) << head.status();
  // Each library's BuiltinRegistry() is its own, not the test binary's nor the other plugin's.
  EXPECT_NE(&(*base)->registry(), &(*head)->registry());
  EXPECT_NE(&(*base)->registry(), &BuiltinRegistry());
  EXPECT_NE((*base)->registry().Find("plugin_probe"), nullptr);
  EXPECT_EQ(BuiltinRegistry().Find("plugin_probe"), nullptr);
  // Flavor() has one name in both libraries: each variant calls its own.
  EXPECT_EQ(RunProbe((*base)->registry(), "cpu_flavor"), std::vector<float>(8, 1.0f));
  EXPECT_EQ(RunProbe((*head)->registry(), "cpu_flavor"), std::vector<float>(8, 2.0f));
  EXPECT_EQ(RunProbe((*base)->registry(), "cpu_copy"), std::vector<float>(8, 3.0f));
  EXPECT_EQ((*base)->suite_version(), "test-test_plugin_base");
  EXPECT_EQ((*head)->suite_version(), "test-test_plugin_head");
  EXPECT_EQ((*head)->abi_version(), KBENCH_PLUGIN_ABI_VERSION);
}

TEST(PluginLoader, OtherAbiVersionIsRefusedNamingBoth) {
  auto p = LoadedPlugin::Open(KBENCH_TEST_PLUGIN_ABI99);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("plugin ABI version 99"));
  EXPECT_THAT(p.status().message(), HasSubstr("this runner's version 1"));
}

TEST(PluginLoader, OtherTypeLayoutIsRefused) {
  auto p = LoadedPlugin::Open(KBENCH_TEST_PLUGIN_LAYOUT);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("type layout"));
}

TEST(PluginLoader, LibraryWithoutEntryPointAndMissingFile) {
  auto p = LoadedPlugin::Open(KBENCH_TEST_NOT_A_PLUGIN);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("not a kbench kernel plugin"));
  auto missing = LoadedPlugin::Open("/nonexistent/plugin.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(PluginLoader, OwnLibraryLoadsThroughTheEntryPoint) {
  auto own = LoadedPlugin::OpenOwn();
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(&(*own)->registry(), &BuiltinRegistry());  // The copy this process links, not a second one.
  EXPECT_EQ((*own)->suite_version(), SuiteVersion());
}

TEST(PluginLoader, CheckCompatibleComparesVersionAndLayout) {
  KbenchPluginV1 entry{KBENCH_PLUGIN_ABI_VERSION, LayoutFingerprint(), "b", "v", &BuiltinRegistry()};
  EXPECT_TRUE(CheckCompatible(entry, "x.so").ok());
  entry.abi_version = 2;
  EXPECT_THAT(CheckCompatible(entry, "x.so").message(), HasSubstr("x.so: plugin ABI version 2"));
  entry.abi_version = KBENCH_PLUGIN_ABI_VERSION;
  entry.registry = nullptr;
  EXPECT_FALSE(CheckCompatible(entry, "x.so").ok());
}

}  // namespace
}  // namespace kbench::kernels::plugin
