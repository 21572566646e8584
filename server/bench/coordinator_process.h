// The coordinator kbench-load measures, when it starts one itself: a child process on 127.0.0.1:0
// whose address is read from its first stdout line, and whose memory and CPU time are read from /proc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kbench::load {

// Memory and CPU of a process, from /proc/<pid>/status and /proc/<pid>/stat.
struct ProcessUsage {
  int64_t rss_kb = 0;      // VmRSS.
  int64_t hwm_kb = 0;      // VmHWM: the peak RSS.
  double cpu_seconds = 0;  // User + system time.
};
absl::StatusOr<ProcessUsage> ReadUsage(pid_t pid);

class CoordinatorProcess {
 public:
  // Starts `binary --listen=127.0.0.1:0 --metrics-listen= --db=<db> <extra...>`, its stderr to log_path.
  static absl::StatusOr<std::unique_ptr<CoordinatorProcess>> Start(const std::string& binary, const std::string& db,
                                                                   const std::vector<std::string>& extra,
                                                                   const std::string& log_path);
  ~CoordinatorProcess();  // SIGKILL if still running.

  const std::string& address() const { return address_; }
  pid_t pid() const { return pid_; }
  // SIGTERM and wait; the exit status (128 + signal when killed).
  int Stop();

 private:
  pid_t pid_ = -1;
  std::string address_;
  bool exited_ = false;
  int stdout_fd_ = -1;  // Kept open while it runs, so that a late line to stdout never meets a closed pipe.
};

}  // namespace kbench::load
