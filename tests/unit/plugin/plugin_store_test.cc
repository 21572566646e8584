// The coordinator's plugin store (upload, dedupe, size limit, hash checks) and the worker's plugin
// cache (fetch once, verify the hash, refuse what is too large or damaged).
#include <filesystem>
#include <fstream>
#include <string>

#include "api/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/plugin_store.h"
#include "worker/plugin/plugin_cache.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

std::string TempDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

std::string Sha(const std::string& bytes) {
  api::Sha256 h;
  h.Update(bytes);
  return h.HexDigest();
}

absl::StatusOr<server::StoredPlugin> Upload(const server::PluginStore& store, const std::string& bytes,
                                            size_t piece = 7, const std::string& expected = "") {
  auto up = store.BeginUpload();
  if (!up.ok()) return up.status();
  for (size_t at = 0; at < bytes.size(); at += piece)
    if (absl::Status s = (*up)->Append(absl::string_view(bytes).substr(at, piece)); !s.ok()) return s;
  return (*up)->Finish(expected);
}

TEST(PluginStore, StoresByHashAndDedupes) {
  auto store = server::PluginStore::Open(TempDir("store"), 1000);
  ASSERT_TRUE(store.ok()) << store.status();
  const std::string bytes(300, 'x');
  auto first = Upload(**store, bytes);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->sha256, Sha(bytes));
  EXPECT_EQ(first->size_bytes, 300);
  EXPECT_FALSE(first->already_stored);
  auto second = Upload(**store, bytes, 64, Sha(bytes));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->already_stored);
  EXPECT_EQ(*(*store)->SizeOf(first->sha256), 300);
  auto path = (*store)->PathOf(first->sha256);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*api::Sha256OfFile(*path), first->sha256);
  // Only the stored file is left: no temporary files of either upload.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator((*store)->dir())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(PluginStore, RefusesWhatIsTooLargeEmptyOrDamaged) {
  auto store = server::PluginStore::Open(TempDir("store-limits"), 100);
  ASSERT_TRUE(store.ok());
  auto big = Upload(**store, std::string(101, 'y'));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(big.status().message(), HasSubstr("100 bytes"));
  auto empty = Upload(**store, "");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  auto damaged = Upload(**store, "abc", 7, Sha("abd"));
  ASSERT_FALSE(damaged.ok());
  EXPECT_THAT(damaged.status().message(), HasSubstr("expected_sha256"));
  EXPECT_EQ((*store)->SizeOf(Sha("abc")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*store)->SizeOf("../../etc/passwd").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PluginCache, FetchesOnceAndVerifies) {
  worker::PluginCache cache(TempDir("cache"), 1000);
  const std::string bytes = "plugin bytes";
  int fetches = 0;
  worker::PluginFetcher fetch = [&](const std::string&, const std::function<absl::Status(absl::string_view)>& write) {
    ++fetches;
    if (absl::Status s = write(absl::string_view(bytes).substr(0, 5)); !s.ok()) return s;
    return write(absl::string_view(bytes).substr(5));
  };
  auto path = cache.Ensure(Sha(bytes), fetch);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*api::Sha256OfFile(*path), Sha(bytes));
  ASSERT_TRUE(cache.Ensure(Sha(bytes), fetch).ok());
  EXPECT_EQ(fetches, 1);
  // A fresh cache over the same folder trusts the file after hashing it, without fetching.
  worker::PluginCache again(cache.dir(), 1000);
  ASSERT_TRUE(again.Ensure(Sha(bytes), fetch).ok());
  EXPECT_EQ(fetches, 1);
}

TEST(PluginCache, RefusesWrongBytesAndOversizedPlugins) {
  worker::PluginCache cache(TempDir("cache-bad"), 8);
  auto wrong = cache.Ensure(Sha("expected"), [](const std::string&, const auto& write) { return write("other"); });
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kDataLoss);
  auto big = cache.Ensure(Sha("123456789"), [](const std::string&, const auto& write) { return write("123456789"); });
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(cache.Ensure("not-a-hash", nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(cache.dir())) files += e.is_regular_file();
  EXPECT_EQ(files, 0);  // Nothing half-written is left behind.
}

}  // namespace
}  // namespace kbench
