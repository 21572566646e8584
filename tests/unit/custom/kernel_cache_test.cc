#include "worker/custom/kernel_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace kbench::worker {
namespace {

std::string TempDir() {
  auto dir = std::filesystem::temp_directory_path() / ("kbench-cache-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(KernelCache, RoundTripsBinaryImages) {
  const std::string dir = TempDir();
  KernelCache cache(dir + "/nested");
  EXPECT_FALSE(cache.Get("k1").has_value());
  std::string image("\x7f" "ELF\0\1\2\n\n3", 10);
  ASSERT_TRUE(cache.Put("k1", {.image_kind = "cubin", .entry = "_Z3fooPf", .compile_log = "warning\nx", .image = image}).ok());
  auto hit = cache.Get("k1");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->image_kind, "cubin");
  EXPECT_EQ(hit->entry, "_Z3fooPf");
  EXPECT_EQ(hit->compile_log, "warning\nx");
  EXPECT_EQ(hit->image, image);
  std::filesystem::remove_all(dir);
}

TEST(KernelCache, ADamagedEntryIsAMiss) {
  const std::string dir = TempDir();
  KernelCache cache(dir);
  ASSERT_TRUE(cache.Put("k", {.image_kind = "ptx", .entry = "e", .compile_log = "", .image = "0123456789"}).ok());
  const auto path = std::filesystem::path(dir) / "k.kernel";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4);
  EXPECT_FALSE(cache.Get("k").has_value());
  std::ofstream(path) << "garbage";
  EXPECT_FALSE(cache.Get("k").has_value());
  std::filesystem::remove_all(dir);
}

TEST(KernelCache, EmptyDirDisablesIt) {
  KernelCache cache("");
  EXPECT_TRUE(cache.Put("k", {.image_kind = "ptx", .entry = "e", .compile_log = "", .image = "x"}).ok());
  EXPECT_FALSE(cache.Get("k").has_value());
}

}  // namespace
}  // namespace kbench::worker
