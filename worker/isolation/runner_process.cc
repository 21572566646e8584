#include "worker/isolation/runner_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/custom/kernel_cache.h"
#include "worker/isolation/child_env.h"
#include "worker/isolation/framing.h"

extern char** environ;

namespace kbench::worker {
namespace {

std::string DescribeExit(int status) {
  if (WIFSIGNALED(status)) return absl::StrCat("killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  return "ended";
}

// The runner runs job code (custom kernels, plugins): it gets the allow-listed environment, with
// HOME its private directory, and the caches it uses resolved here so they stay where they were.
std::vector<std::string> RunnerEnvironment(const std::string& work_dir) {
  ChildEnvOptions options{.home = work_dir, .set = {}};
  // Paths made absolute: the runner works in `work_dir`.
  std::error_code ec;
  options.set.push_back({"KBENCH_KERNEL_CACHE", std::filesystem::absolute(KernelCache::DefaultDir(), ec).string()});
  if (const char* n = std::getenv("KBENCH_NVRTC"); n && std::string_view(n).find('/') != std::string_view::npos)
    options.set.push_back({"KBENCH_NVRTC", std::filesystem::absolute(n, ec).string()});
  const char* home = std::getenv("HOME");
  if (const char* d = std::getenv("CUDA_CACHE_PATH"); (d == nullptr || *d == '\0') && home && *home == '/')
    options.set.push_back({"CUDA_CACHE_PATH", absl::StrCat(home, "/.nv/ComputeCache")});  // the driver's default
  return BuildChildEnvironment(environ, options);
}

}  // namespace

RunnerProcess::RunnerProcess(RunnerConfig config) : config_(std::move(config)) {
  // A write to a runner that just died must be an error return, not a signal that kills the worker.
  signal(SIGPIPE, SIG_IGN);
}

RunnerProcess::~RunnerProcess() { Stop(/*kill_it=*/true); }

absl::Status RunnerProcess::Start() {
  // A private working directory (and HOME) for this runner.
  RemovePrivateDir(work_dir_);
  work_dir_ = MakePrivateDir("runner");
  if (work_dir_.empty())
    return absl::InternalError(absl::StrCat("cannot make the runner's private directory: ", strerror(errno)));
  int req[2], resp[2];
  if (pipe2(req, O_CLOEXEC) != 0 || pipe2(resp, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, config_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_adddup2(&fa, req[0], 3);   // dup2 clears CLOEXEC on the new descriptor
  posix_spawn_file_actions_adddup2(&fa, resp[1], 4);
  // Last, so the log above is opened relative to the worker's directory.
  posix_spawn_file_actions_addchdir_np(&fa, work_dir_.c_str());
  // Absolute, since the working directory changes before the exec.
  std::error_code ec;
  const std::string runner_path = std::filesystem::absolute(config_.runner_path, ec).string();
  const std::string device = std::to_string(config_.device);
  std::vector<std::string> args = {runner_path, "--backend", config_.backend, "--device", device,
                                   "--in_fd", "3", "--out_fd", "4"};
  if (config_.quick_calibration) args.push_back("--quick_calibration");
  args.insert(args.end(), config_.extra_args.begin(), config_.extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  std::vector<std::string> env = RunnerEnvironment(work_dir_);
  std::vector<char*> envp = EnvironmentPointers(env);
  const int rc = posix_spawn(&pid, runner_path.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(req[0]);
  close(resp[1]);
  if (rc != 0) {
    close(req[1]);
    close(resp[0]);
    RemovePrivateDir(work_dir_);
    work_dir_.clear();
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
  if (pid_ <= 0) {
    RemovePrivateDir(work_dir_);
    work_dir_.clear();
    return "not running";
  }
  int status = 0;
  if (!kill_it) {
    // It is exiting on its own (fatal reply or closed pipe); give it a moment before forcing it.
    for (int i = 0; i < 200 && waitpid(pid_, &status, WNOHANG) == 0; ++i) usleep(10'000);
    if (kill(pid_, 0) == 0) kill_it = true;
    else {
      pid_ = -1;
      RemovePrivateDir(work_dir_);
      work_dir_.clear();
      return DescribeExit(status);
    }
  }
  if (kill_it) kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  RemovePrivateDir(work_dir_);
  work_dir_.clear();
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

absl::StatusOr<runner::RunnerResponse> RunnerProcess::Call(const runner::RunnerRequest& request,
                                                       std::chrono::milliseconds timeout) {
  if (pid_ <= 0)
    if (auto s = Start(); !s.ok()) return s;
  runner::RunnerResponse response;
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
