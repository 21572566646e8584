// The environment of children that run job code (worker/isolation/child_env.h): the builder keeps
// the allow-listed names and drops every secret, even under an allowed prefix; and a real runner
// child started by RunnerProcess (here a stand-in that prints what it got) sees no KBENCH_TOKEN,
// works in a private directory that is also its HOME, and that directory is gone when it ends.
#include "worker/isolation/child_env.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "worker/isolation/runner_process.h"

namespace kbench::worker {
namespace {

constexpr char kSecret[] = "s3cr3t-xyz";

std::set<std::string> Names(const std::vector<std::string>& env) {
  std::set<std::string> names;
  for (const std::string& e : env) names.insert(e.substr(0, e.find('=')));
  return names;
}

TEST(ChildEnv, KeepsTheAllowedNamesAndDropsSecrets) {
  const char* parent[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "TMPDIR=/tmp",
                          "LD_LIBRARY_PATH=/usr/local/cuda/lib64", "CUDA_VISIBLE_DEVICES=1",
                          "CUDA_CACHE_PATH=/c", "NVIDIA_VISIBLE_DEVICES=all", "KBENCH_NVRTC=/n/libnvrtc.so",
                          "KBENCH_KERNEL_CACHE=/k", "KBENCH_FAULT_INJECTION=1", "ASAN_OPTIONS=x=1",
                          // Secrets and what no child needs:
                          "KBENCH_TOKEN=s3cr3t-xyz", "KBENCH_TLS_KEY=/key.pem", "KBENCH_COORDINATOR=h:1",
                          "AWS_SECRET_ACCESS_KEY=s3cr3t-xyz", "GITHUB_TOKEN=s3cr3t-xyz", "CUDA_TOKEN=s3cr3t-xyz",
                          "NVIDIA_API_KEY=s3cr3t-xyz", "DB_PASSWORD=s3cr3t-xyz", "SSH_AUTH_SOCK=/s",
                          "LD_PRELOAD=/evil.so", "HOME=/home/w", "PWD=/w", "USER=w", "noequals", nullptr};
  const std::vector<std::string> env =
      BuildChildEnvironment(const_cast<char* const*>(parent), {.home = "/tmp/kbench-runner-1",
                                                                .set = {{"KBENCH_KERNEL_CACHE", "/abs/k"}}});
  const std::set<std::string> names = Names(env);
  for (const char* kept : {"PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
                           "CUDA_CACHE_PATH", "NVIDIA_VISIBLE_DEVICES", "KBENCH_NVRTC", "KBENCH_KERNEL_CACHE",
                           "ASAN_OPTIONS", "HOME", "PWD"})
    EXPECT_TRUE(names.contains(kept)) << kept;
  // KBENCH_FAULT_INJECTION: no longer read by anyone (the fault-injection op is a test plugin now).
  for (const char* dropped : {"KBENCH_TOKEN", "KBENCH_TLS_KEY", "KBENCH_COORDINATOR", "KBENCH_FAULT_INJECTION",
                              "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "CUDA_TOKEN", "NVIDIA_API_KEY", "DB_PASSWORD",
                              "SSH_AUTH_SOCK", "LD_PRELOAD", "USER", "noequals"})
    EXPECT_FALSE(names.contains(dropped)) << dropped;
  for (const std::string& e : env) EXPECT_EQ(e.find(kSecret), std::string::npos) << e;
  // HOME and PWD are the private directory; a value set replaces the inherited one, once.
  EXPECT_NE(std::find(env.begin(), env.end(), "HOME=/tmp/kbench-runner-1"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "PWD=/tmp/kbench-runner-1"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "KBENCH_KERNEL_CACHE=/abs/k"), env.end());
  EXPECT_EQ(std::count_if(env.begin(), env.end(), [](const std::string& e) { return absl::StartsWith(e, "KBENCH_KERNEL_CACHE="); }), 1);
  EXPECT_EQ(std::count_if(env.begin(), env.end(), [](const std::string& e) { return absl::StartsWith(e, "HOME="); }), 1);
}

TEST(ChildEnv, ASecretCannotBeSetThroughTheOverridesEither) {
  const char* parent[] = {nullptr};
  const std::vector<std::string> env =
      BuildChildEnvironment(const_cast<char* const*>(parent), {.set = {{"KBENCH_TOKEN", kSecret}, {"CUDA_X", "1"}}});
  EXPECT_EQ(env, std::vector<std::string>{"CUDA_X=1"});
}

TEST(ChildEnv, SecretLookingNames) {
  for (const char* s : {"KBENCH_TOKEN", "token", "MY_SECRET", "PGPASSWORD", "AWS_SECRET_ACCESS_KEY", "SSH_KEY",
                        "API_KEY_FILE", "KEY", "GOOGLE_APPLICATION_CREDENTIALS", "HTTP_AUTHORIZATION"})
    EXPECT_TRUE(LooksLikeSecret(s)) << s;
  for (const char* s : {"PATH", "CUDA_VISIBLE_DEVICES", "KBENCH_NVRTC", "KBENCH_KERNEL_CACHE", "LANG", "KEYBOARD"})
    EXPECT_FALSE(LooksLikeSecret(s)) << s;
}

TEST(ChildEnv, PrivateDirectoriesAreFreshAndRemoved) {
  const std::string a = MakePrivateDir("test"), b = MakePrivateDir("test");
  ASSERT_FALSE(a.empty());
  EXPECT_NE(a, b);
  EXPECT_EQ(std::filesystem::status(a).permissions() & std::filesystem::perms::all, std::filesystem::perms::owner_all);
  std::ofstream(a + "/f") << "x";
  RemovePrivateDir(a);
  RemovePrivateDir(b);
  EXPECT_FALSE(std::filesystem::exists(a));
  EXPECT_FALSE(std::filesystem::exists(b));
}

TEST(ChildEnv, TheWorkerScrubsItsOwnSecretsOnceRead) {
  setenv("KBENCH_TOKEN", kSecret, 1);
  setenv("MY_API_KEY", kSecret, 1);
  setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  ScrubOwnSecrets();
  EXPECT_EQ(getenv("KBENCH_TOKEN"), nullptr);
  EXPECT_EQ(getenv("MY_API_KEY"), nullptr);
  ASSERT_NE(getenv("CUDA_VISIBLE_DEVICES"), nullptr);
  EXPECT_STREQ(getenv("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_NE(getenv("PATH"), nullptr);
}

// The runner's environment, as the spawned child sees it.
TEST(ChildEnv, ARunnerChildInheritsNoSecret) {
  setenv("KBENCH_TOKEN", kSecret, 1);
  setenv("GITHUB_TOKEN", kSecret, 1);
  setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  const std::string log = (std::filesystem::temp_directory_path() /
                           ("kbench-child-env-test-" + std::to_string(getpid()) + ".log")).string();
  std::filesystem::remove(log);
  std::string work_dir;
  {
    RunnerProcess runner({.runner_path = KBENCH_ENV_DUMP, .backend = "cpu", .log_path = log});
    // The stand-in answers nothing and exits: the call fails, and its output is the log.
    absl::StatusOr<runner::RunnerResponse> r = runner.Call(runner::RunnerRequest(), std::chrono::seconds(60));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
    EXPECT_TRUE(runner.work_dir().empty());  // removed when the child ended
  }
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string dump = ss.str();
  std::filesystem::remove(log);
  unsetenv("KBENCH_TOKEN");
  unsetenv("GITHUB_TOKEN");
  ASSERT_NE(dump.find("cwd="), std::string::npos) << dump;
  EXPECT_EQ(dump.find(kSecret), std::string::npos) << dump;
  EXPECT_EQ(dump.find("KBENCH_TOKEN"), std::string::npos) << dump;
  std::string cwd, home;
  bool path = false, cuda = false, cache = false;
  for (absl::string_view line : absl::StrSplit(dump, '\n')) {
    if (absl::ConsumePrefix(&line, "cwd=")) cwd = std::string(line);
    if (!absl::ConsumePrefix(&line, "env=")) continue;
    path |= absl::StartsWith(line, "PATH=");
    cuda |= line == "CUDA_VISIBLE_DEVICES=0";
    cache |= absl::StartsWith(line, "KBENCH_KERNEL_CACHE=/");  // resolved, absolute
    if (absl::ConsumePrefix(&line, "HOME=")) home = std::string(line);
  }
  EXPECT_TRUE(path && cuda && cache) << dump;
  EXPECT_NE(cwd.find("/kbench-runner-"), std::string::npos) << dump;
  EXPECT_EQ(home, cwd);
  EXPECT_FALSE(std::filesystem::exists(cwd)) << "the runner's private directory outlived it";
}

}  // namespace
}  // namespace kbench::worker
