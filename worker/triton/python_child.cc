// The Triton compile child; see python_child.h.
#include "worker/triton/python_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "worker/custom/compile_sandbox.h"
#include "worker/isolation/child_env.h"

extern char** environ;

namespace kbench::worker {
namespace embedded {
extern const char kTritonCompileScript[];  // triton_compile_script.cc, generated from kbench_triton_compile.py
}  // namespace embedded

const std::string& TritonCompileScript() {
  static const std::string* script = new std::string(embedded::kTritonCompileScript);
  return *script;
}

namespace {

constexpr size_t kMaxOut = size_t{64} << 20;
constexpr size_t kMaxErr = 16 * 1024;

void CloseBoth(int fds[2]) {
  if (fds[0] >= 0) close(fds[0]);
  if (fds[1] >= 0) close(fds[1]);
}

}  // namespace

absl::StatusOr<PythonChildOutput> RunPythonChild(const std::string& python, const std::string& mode,
                                                 const std::string& input, std::chrono::milliseconds limit) {
  CompileChildSetup setup = PrepareCompileChild();
  setup.writable_work_dir = true;
  struct RemoveDir {
    const std::string& dir;
    ~RemoveDir() { RemovePrivateDir(dir); }
  } remove_dir{setup.work_dir};
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, note[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      pipe2(note, O_CLOEXEC) != 0) {
    CloseBoth(in), CloseBoth(out), CloseBoth(err), CloseBoth(note);
    return absl::InternalError(absl::StrCat("triton compile: pipe: ", strerror(errno)));
  }
  const std::string& script = TritonCompileScript();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    CloseBoth(in), CloseBoth(out), CloseBoth(err), CloseBoth(note);
    return absl::InternalError(absl::StrCat("triton compile: fork: ", strerror(errno)));
  }
  if (pid == 0) {
    const CompileSandbox sandbox = EnterCompileChild(setup);
    const std::string described = sandbox.Describe();
    (void)!write(note[1], described.data(), described.size());
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);  // dup2 clears close-on-exec on the copies
    const char* argv[] = {python.c_str(), "-s", "-c", script.c_str(), mode.c_str(), nullptr};
    execve(python.c_str(), const_cast<char* const*>(argv), environ);
    const std::string msg = absl::StrCat("cannot run ", python, ": ", strerror(errno), "\n");
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
  }
  close(in[0]), close(out[1]), close(err[1]), close(note[1]);
  PythonChildOutput result;
  size_t written = 0;
  int in_fd = in[1];
  if (input.empty()) close(in_fd), in_fd = -1;
  bool timed_out = false, out_open = true, err_open = true, note_open = true;
  char buf[1 << 16];
  while (out_open || err_open || note_open) {
    const auto left = limit - std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p[4] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0},
                   {note_open ? note[0] : -1, POLLIN, 0}, {in_fd, POLLOUT, 0}};
    const int ready = poll(p, 4, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    if (in_fd >= 0 && (p[3].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = (p[3].revents & POLLOUT) ? write(in_fd, input.data() + written, input.size() - written) : -1;
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EINTR && errno != EAGAIN) written = input.size();  // the child stopped reading
      if (written >= input.size()) close(in_fd), in_fd = -1;
    }
    struct Stream {
      int fd;
      bool* open;
      std::string* text;
      size_t cap;
    } streams[3] = {{out[0], &out_open, &result.out, kMaxOut},
                    {err[0], &err_open, &result.err, kMaxErr * 4},
                    {note[0], &note_open, &result.sandbox, 1024}};
    for (int i = 0; i < 3; ++i) {
      if (!*streams[i].open || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(streams[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *streams[i].open = false;
        continue;
      }
      if (streams[i].text->size() < streams[i].cap) streams[i].text->append(buf, static_cast<size_t>(n));
    }
  }
  if (in_fd >= 0) close(in_fd);
  close(out[0]), close(err[0]), close(note[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return absl::DeadlineExceededError(
        absl::StrCat("Triton compile time limit of ", limit.count(), " ms exceeded; the compile was stopped"));
  if (result.err.size() > kMaxErr) result.err = result.err.substr(result.err.size() - kMaxErr);
  if (WIFEXITED(wstatus)) result.exit_code = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) result.term_signal = WTERMSIG(wstatus);
  return result;
}

}  // namespace kbench::worker
