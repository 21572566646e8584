// kbench-client: entry point. Wires the process (argv, stdout/stderr, terminal, Ctrl-C) to RunCli.
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <string>
#include <vector>

#include "client/commands.h"

namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<bool> g_catch_interrupts{false};

// While a command waits on jobs, Ctrl-C only asks it to stop waiting (the jobs keep running); at any
// other time it ends the process as usual.
void OnSigint(int sig) {
  if (g_catch_interrupts.load()) {
    g_interrupted.store(true);
    return;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");
  struct sigaction sa = {};
  sa.sa_handler = OnSigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);

  std::ios::sync_with_stdio(false);
  kbench::client::Io io{std::cout, std::cerr};
  io.err_is_tty = isatty(STDERR_FILENO) == 1;
  if (winsize ws{}; io.err_is_tty && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    io.err_columns = ws.ws_col;
  io.interrupted = &g_interrupted;
  io.catch_interrupts = &g_catch_interrupts;

  std::vector<std::string> args(argv + 1, argv + argc);
  int rc = kbench::client::RunCli(args, io);
  std::cout.flush();
  return rc;
}
