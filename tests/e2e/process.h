// Starting the real binaries for end-to-end tests: a child process whose output goes to a file,
// waiting for a line it prints (the bound port), signals, and running a command to completion.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace kbench::e2e {

class Process {
 public:
  // Starts argv[0] with the arguments; stdout and stderr go to log_path.
  Process(std::vector<std::string> argv, std::string log_path);
  ~Process();  // SIGKILL if still running.
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // The last word of the first log line containing `marker`, once it appears; nullopt on timeout or exit.
  std::optional<std::string> WaitForLine(const std::string& marker, std::chrono::seconds timeout);
  void Signal(int sig);
  // Waits for exit; returns the exit status (128+signal when killed).
  int Wait();
  bool Running();
  std::string Log() const;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  std::optional<int> status_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs a command to completion (with a time limit) and captures its output.
CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::seconds timeout = std::chrono::seconds(300));

}  // namespace kbench::e2e
