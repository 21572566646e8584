#include "worker/isolation/runner_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/isolation/framing.h"

extern char** environ;

namespace kbench::worker {
namespace {

std::string DescribeExit(int status) {
  if (WIFSIGNALED(status)) return absl::StrCat("killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  return "ended";
}

}  // namespace

RunnerProcess::RunnerProcess(RunnerConfig config) : config_(std::move(config)) {
  // A write to a runner that just died must be an error return, not a signal that kills the worker.
  signal(SIGPIPE, SIG_IGN);
}

RunnerProcess::~RunnerProcess() { Stop(/*kill_it=*/true); }

absl::Status RunnerProcess::Start() {
  int req[2], resp[2];
  if (pipe2(req, O_CLOEXEC) != 0 || pipe2(resp, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, config_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_adddup2(&fa, req[0], 3);   // dup2 clears CLOEXEC on the new descriptor
  posix_spawn_file_actions_adddup2(&fa, resp[1], 4);
  const std::string device = std::to_string(config_.device);
  std::vector<std::string> args = {config_.runner_path, "--backend", config_.backend, "--device", device,
                                   "--in_fd", "3", "--out_fd", "4"};
  if (config_.quick_calibration) args.push_back("--quick_calibration");
  args.insert(args.end(), config_.extra_args.begin(), config_.extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, config_.runner_path.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(req[0]);
  close(resp[1]);
  if (rc != 0) {
    close(req[1]);
    close(resp[0]);
    return absl::InternalError(absl::StrCat("cannot start runner ", config_.runner_path, ": ", strerror(rc)));
  }
  pid_ = pid;
  to_runner_ = req[1];
  from_runner_ = resp[0];
  ++starts_;
  return absl::OkStatus();
}

std::string RunnerProcess::Stop(bool kill_it) {
  if (to_runner_ >= 0) close(to_runner_);
  if (from_runner_ >= 0) close(from_runner_);
  to_runner_ = from_runner_ = -1;
  if (pid_ <= 0) return "not running";
  int status = 0;
  if (!kill_it) {
    // It is exiting on its own (fatal reply or closed pipe); give it a moment before forcing it.
    for (int i = 0; i < 200 && waitpid(pid_, &status, WNOHANG) == 0; ++i) usleep(10'000);
    if (kill(pid_, 0) == 0) kill_it = true;
    else {
      pid_ = -1;
      return DescribeExit(status);
    }
  }
  if (kill_it) kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return DescribeExit(status);
}

std::string RunnerProcess::LogTail() const {
  std::ifstream in(config_.log_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  constexpr size_t kTail = 8000;  // room for a fault report with its frames and a stack trace
  return s.size() > kTail ? s.substr(s.size() - kTail) : s;
}

absl::StatusOr<v1::RunnerResponse> RunnerProcess::Call(const v1::RunnerRequest& request,
                                                       std::chrono::milliseconds timeout) {
  if (pid_ <= 0)
    if (auto s = Start(); !s.ok()) return s;
  v1::RunnerResponse response;
  absl::Status s = WriteMessage(to_runner_, request);
  if (s.ok()) s = ReadMessage(from_runner_, &response, timeout);
  if (s.ok()) {
    if (response.fatal()) Stop(/*kill_it=*/false);  // it exits by itself after a fatal reply
    return response;
  }
  if (absl::IsDeadlineExceeded(s)) {
    Stop(/*kill_it=*/true);
    return absl::DeadlineExceededError(
        absl::StrCat("watchdog: no result after ", timeout.count(), " ms; runner killed"));
  }
  const std::string how = Stop(/*kill_it=*/false);
  return absl::UnavailableError(absl::StrCat("runner ", how, "; its last output:\n", LogTail()));
}

}  // namespace kbench::worker
