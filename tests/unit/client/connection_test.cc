// Tests of coordinator address and token resolution: flag > environment > config file > default.
#include "client/connection.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench::client {
namespace {

using ::testing::HasSubstr;

class ConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"KBENCH_COORDINATOR", "KBENCH_TOKEN", "KBENCH_CONFIG", "HOME"}) {
      if (const char* old = getenv(v)) saved_.emplace_back(v, old);
      unsetenv(v);
    }
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("kbench_conn_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    for (const char* v : {"KBENCH_COORDINATOR", "KBENCH_TOKEN", "KBENCH_CONFIG", "HOME"}) unsetenv(v);
    for (const auto& [k, v] : saved_) setenv(k.c_str(), v.c_str(), 1);
    std::filesystem::remove_all(dir_);
  }
  std::string Write(const std::string& rel, const std::string& text) {
    auto p = dir_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

  std::filesystem::path dir_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST_F(ConnectionTest, DefaultWithoutAnything) {
  auto c = ResolveConnection({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->address, "127.0.0.1:50051");
  EXPECT_EQ(c->token, "");
}

TEST_F(ConnectionTest, Precedence) {
  // The default config file under $HOME is the lowest source.
  Write(".config/kbench/client.conf", "# the fleet\ncoordinator = file:1\ntoken = file-token\n");
  setenv("HOME", dir_.c_str(), 1);
  auto from_file = ResolveConnection({});
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ(from_file->address, "file:1");
  EXPECT_EQ(from_file->token, "file-token");

  setenv("KBENCH_COORDINATOR", "env:2", 1);
  auto from_env = ResolveConnection({});
  EXPECT_EQ(from_env->address, "env:2");
  EXPECT_EQ(from_env->token, "file-token");  // Each field resolves on its own.

  setenv("KBENCH_TOKEN", "env-token", 1);
  ConnectionFlags flags;
  flags.coordinator = "flag:3";
  auto from_flag = ResolveConnection(flags);
  EXPECT_EQ(from_flag->address, "flag:3");
  EXPECT_EQ(from_flag->token, "env-token");
  flags.token = "flag-token";
  EXPECT_EQ(ResolveConnection(flags)->token, "flag-token");

  // An empty variable does not hide the file.
  setenv("KBENCH_TOKEN", "", 1);
  EXPECT_EQ(ResolveConnection({})->token, "file-token");
}

TEST_F(ConnectionTest, ConfigPathPrecedence) {
  std::string home_conf = Write(".config/kbench/client.conf", "coordinator = home:1\n");
  std::string env_conf = Write("env.conf", "coordinator = envconf:2\n");
  std::string flag_conf = Write("flag.conf", "coordinator = flagconf:3\n");
  setenv("HOME", dir_.c_str(), 1);
  setenv("KBENCH_CONFIG", env_conf.c_str(), 1);
  EXPECT_EQ(ResolveConnection({})->address, "envconf:2");
  ConnectionFlags flags;
  flags.config = flag_conf;
  EXPECT_EQ(ResolveConnection(flags)->address, "flagconf:3");
  EXPECT_EQ(FindConfigPath(flags).path, flag_conf);
  EXPECT_TRUE(FindConfigPath(flags).explicit_path);
  unsetenv("KBENCH_CONFIG");
  EXPECT_EQ(FindConfigPath({}).path, home_conf);
  EXPECT_FALSE(FindConfigPath({}).explicit_path);
}

TEST_F(ConnectionTest, MissingExplicitConfigIsAnError) {
  ConnectionFlags flags;
  flags.config = (dir_ / "nope.conf").string();
  auto c = ResolveConnection(flags);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("nope.conf"));
  // A missing default file is fine.
  setenv("HOME", dir_.c_str(), 1);
  EXPECT_TRUE(ResolveConnection({}).ok());
}

TEST_F(ConnectionTest, ParseConfig) {
  auto c = ParseConfig("  # comment\n\ncoordinator=h:1   # trailing comment\ntoken = ab#cd\n", "x.conf");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c->coordinator, "h:1");
  EXPECT_EQ(*c->token, "ab#cd");  // '#' inside a value is not a comment.

  auto bad_key = ParseConfig("coordinator = a:1\ncoordinatr = b:2\n", "x.conf");
  ASSERT_FALSE(bad_key.ok());
  EXPECT_THAT(std::string(bad_key.status().message()), HasSubstr("x.conf:2: unknown key 'coordinatr'"));
  auto no_eq = ParseConfig("coordinator a:1\n", "x.conf");
  ASSERT_FALSE(no_eq.ok());
  EXPECT_THAT(std::string(no_eq.status().message()), HasSubstr("x.conf:1"));
}

}  // namespace
}  // namespace kbench::client
