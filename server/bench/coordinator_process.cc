// Spawning the coordinator and reading its address, its RSS and its CPU time.
#include "server/bench/coordinator_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace kbench::load {
namespace {

constexpr char kListening[] = "kbench-coordinator listening on ";
constexpr auto kStartTimeout = std::chrono::seconds(60);

int64_t StatusField(const std::string& status, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(status, '\n')) {
    if (!absl::StartsWith(line, name)) continue;
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    int64_t kb = 0;
    if (words.size() >= 2 && absl::SimpleAtoi(words[1], &kb)) return kb;
  }
  return 0;
}

}  // namespace

absl::StatusOr<ProcessUsage> ReadUsage(pid_t pid) {
  std::ifstream status_file(absl::StrCat("/proc/", pid, "/status"));
  std::ifstream stat_file(absl::StrCat("/proc/", pid, "/stat"));
  if (!status_file || !stat_file) return absl::NotFoundError(absl::StrCat("process ", pid, " is gone"));
  std::stringstream status, stat;
  status << status_file.rdbuf();
  stat << stat_file.rdbuf();
  ProcessUsage u;
  u.rss_kb = StatusField(status.str(), "VmRSS:");
  u.hwm_kb = StatusField(status.str(), "VmHWM:");
  // utime and stime are fields 14 and 15, counted after the parenthesised command name.
  const std::string s = stat.str();
  const size_t close = s.rfind(')');
  if (close != std::string::npos) {
    std::vector<absl::string_view> f = absl::StrSplit(absl::string_view(s).substr(close + 2), ' ');
    int64_t utime = 0, stime = 0;
    if (f.size() > 12 && absl::SimpleAtoi(f[11], &utime) && absl::SimpleAtoi(f[12], &stime))
      u.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  return u;
}

absl::StatusOr<std::unique_ptr<CoordinatorProcess>> CoordinatorProcess::Start(const std::string& binary,
                                                                             const std::string& db,
                                                                             const std::vector<std::string>& extra,
                                                                             const std::string& log_path) {
  int out[2];
  if (pipe(out) != 0) return absl::InternalError("pipe() failed");
  std::vector<std::string> argv = {binary, "--listen=127.0.0.1:0", "--metrics-listen=", "--db=" + db};
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  std::unique_ptr<CoordinatorProcess> p(new CoordinatorProcess);
  const int rc = posix_spawn(&p->pid_, binary.c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    p->exited_ = true;
    return absl::NotFoundError(absl::StrCat("cannot start the coordinator '", binary, "' (--coordinator-bin)"));
  }
  // Read stdout until the address line; the coordinator writes nothing else there but the metrics line.
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (text.find('\n', text.find(kListening)) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd pfd{out[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&pfd, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[512];
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  p->stdout_fd_ = out[0];
  const size_t at = text.find(kListening);
  const size_t end = at == std::string::npos ? at : text.find('\n', at);
  if (end == std::string::npos)
    return absl::UnavailableError(absl::StrCat("the coordinator did not say where it listens; see ", log_path));
  p->address_ = text.substr(at + sizeof(kListening) - 1, end - at - (sizeof(kListening) - 1));
  return p;
}

CoordinatorProcess::~CoordinatorProcess() {
  if (!exited_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

int CoordinatorProcess::Stop() {
  if (exited_ || pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  exited_ = true;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

}  // namespace kbench::load
