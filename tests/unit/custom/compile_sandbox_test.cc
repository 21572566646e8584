// The NVRTC compile child's confinement (worker/custom/compile_sandbox.h), in a real forked child:
// it sees only the allow-listed environment (no KBENCH_TOKEN, no credential), works in its private
// directory (also its HOME), /proc/self/environ (the strings the process started with) shows it
// nothing, and what it reports as applied holds: with "read-only file system" it
// cannot create a file, with "socket() denied" socket() fails with EPERM.
#include "worker/custom/compile_sandbox.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "worker/isolation/child_env.h"

extern char** environ;

namespace kbench::worker {
namespace {

constexpr char kSecret[] = "s3cr3t-xyz";

// Runs EnterCompileChild in a forked child, which answers with what it sees, one "key=value" a line.
std::string RunChild(const CompileChildSetup& setup) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const CompileSandbox s = EnterCompileChild(setup);
    std::string out = absl::StrCat("sandbox=", s.Describe(), "\n");
    char cwd[4096] = {0};
    absl::StrAppend(&out, "cwd=", getcwd(cwd, sizeof cwd) ? cwd : "?", "\n");
    for (char** e = environ; e && *e; ++e) absl::StrAppend(&out, "env=", *e, "\n");
    // What another reader of /proc/<pid>/environ would see: the strings the process started with.
    std::string proc;
    if (const int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC); fd >= 0) {
      char b[4096];
      for (ssize_t n; (n = read(fd, b, sizeof b)) > 0;) proc.append(b, static_cast<size_t>(n));
      close(fd);
    }
    absl::StrAppend(&out, "proc_environ_bytes=", std::count_if(proc.begin(), proc.end(), [](char c) { return c != 0; }), "\n");
    errno = 0;
    const int sock = socket(AF_INET, SOCK_STREAM, 0);
    absl::StrAppend(&out, "socket_errno=", sock < 0 ? errno : 0, "\n");
    const int fd = open((setup.work_dir + "/written").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    absl::StrAppend(&out, "create_errno=", fd < 0 ? errno : 0, "\n");
    (void)!write(fds[1], out.data(), out.size());
    _exit(0);
  }
  close(fds[1]);
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) reply.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  return reply;
}

TEST(CompileSandbox, TheChildSeesNoSecretAndWorksInItsPrivateDirectory) {
  setenv("KBENCH_TOKEN", kSecret, 1);
  setenv("AWS_SECRET_ACCESS_KEY", kSecret, 1);
  setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  const CompileChildSetup setup = PrepareCompileChild();
  ASSERT_FALSE(setup.work_dir.empty());
  const std::string reply = RunChild(setup);
  std::string sandbox, cwd;
  int socket_errno = -1, create_errno = -1, proc_environ_bytes = -1;
  bool path = false, cuda = false;
  std::string home;
  for (absl::string_view line : absl::StrSplit(reply, '\n')) {
    if (absl::ConsumePrefix(&line, "sandbox=")) sandbox = std::string(line);
    else if (absl::ConsumePrefix(&line, "cwd=")) cwd = std::string(line);
    else if (absl::ConsumePrefix(&line, "socket_errno=")) socket_errno = std::stoi(std::string(line));
    else if (absl::ConsumePrefix(&line, "create_errno=")) create_errno = std::stoi(std::string(line));
    else if (absl::ConsumePrefix(&line, "proc_environ_bytes=")) proc_environ_bytes = std::stoi(std::string(line));
    else if (absl::ConsumePrefix(&line, "env=")) {
      path |= absl::StartsWith(line, "PATH=");
      cuda |= line == "CUDA_VISIBLE_DEVICES=0";
      if (absl::ConsumePrefix(&line, "HOME=")) home = std::string(line);
    }
  }
  EXPECT_EQ(reply.find(kSecret), std::string::npos) << reply;
  EXPECT_EQ(reply.find("KBENCH_TOKEN"), std::string::npos) << reply;
  EXPECT_TRUE(path) << reply;
  EXPECT_TRUE(cuda) << reply;
  EXPECT_EQ(home, setup.work_dir);
  EXPECT_EQ(cwd, setup.work_dir);
  EXPECT_NE(sandbox.find("environment allow-listed, private directory"), std::string::npos) << sandbox;
  // This process started with an environment (HOME, PATH, ...); the child's /proc view of it is blank.
  EXPECT_EQ(proc_environ_bytes, 0) << reply;
  // What is reported as applied holds (which protections a node allows varies).
  const bool read_only = sandbox.find("read-only file system") < sandbox.find("not available");
  const bool no_sockets = sandbox.find("socket() denied") < sandbox.find("not available");
  EXPECT_EQ(create_errno, read_only ? EROFS : 0) << sandbox;
  if (no_sockets) EXPECT_EQ(socket_errno, EPERM) << sandbox;
  std::cout << sandbox << "\n";
  unsetenv("KBENCH_TOKEN");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  RemovePrivateDir(setup.work_dir);
  EXPECT_FALSE(std::filesystem::exists(setup.work_dir));
}

}  // namespace
}  // namespace kbench::worker
