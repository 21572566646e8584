#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace kbench::e2e {
namespace {

pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err_path == out_path) posix_spawn_file_actions_adddup2(&fa, 1, 2);
  else posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

Process::Process(std::vector<std::string> argv, std::string log_path) : log_path_(std::move(log_path)) {
  pid_ = Spawn(argv, log_path_, log_path_);
}

Process::~Process() {
  if (Running()) {
    Signal(SIGKILL);
    Wait();
  }
}

bool Process::Running() {
  if (pid_ <= 0 || status_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    status_ = DecodeStatus(status);
    return false;
  }
  return true;
}

std::optional<std::string> Process::WaitForLine(const std::string& marker, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::istringstream log(ReadFile(log_path_));
    for (std::string line; std::getline(log, line);) {
      if (line.find(marker) == std::string::npos) continue;
      const auto space = line.find_last_of(' ');
      return space == std::string::npos ? line : line.substr(space + 1);
    }
    if (!Running()) return std::nullopt;
    // Polling a child's log file: the child owns its output, there is nothing to wait on.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

void Process::Signal(int sig) {
  if (pid_ > 0 && !status_) kill(pid_, sig);
}

int Process::Wait() {
  if (status_) return *status_;
  if (pid_ <= 0) return -1;
  int status = 0;
  waitpid(pid_, &status, 0);
  status_ = DecodeStatus(status);
  return *status_;
}

std::string Process::Log() const { return ReadFile(log_path_); }

CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::seconds timeout) {
  char out_tmpl[] = "/tmp/kbench-e2e-out.XXXXXX";
  char err_tmpl[] = "/tmp/kbench-e2e-err.XXXXXX";
  close(mkstemp(out_tmpl));
  close(mkstemp(err_tmpl));
  CommandResult r;
  const pid_t pid = Spawn(argv, out_tmpl, err_tmpl);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (pid > 0) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      r.exit_code = DecodeStatus(status);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.exit_code = -2;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.out = ReadFile(out_tmpl);
  r.err = ReadFile(err_tmpl);
  unlink(out_tmpl);
  unlink(err_tmpl);
  return r;
}

}  // namespace kbench::e2e
