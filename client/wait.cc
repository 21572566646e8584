// Polling of submitted jobs with live progress on stderr; see wait.h.
#include "client/wait.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "client/format.h"

namespace kbench::client {
namespace {

bool Finished(v1::JobState s) { return s == v1::SUCCEEDED || s == v1::FAILED || s == v1::CANCELLED_JOB; }

bool Transient(absl::StatusCode c) {
  return c == absl::StatusCode::kUnavailable || c == absl::StatusCode::kDeadlineExceeded;
}

// What is shown to the user changed: state, counts or the variant running now.
bool Changed(const v1::Job& a, const v1::Job& b) {
  return a.state() != b.state() || a.progress().results_done() != b.progress().results_done() ||
         a.progress().results_total() != b.progress().results_total() ||
         a.progress().current() != b.progress().current();
}

class ProgressDisplay {
 public:
  explicit ProgressDisplay(Io& io) : io_(io) {}

  void Show(const v1::Job& job, size_t finished_jobs, size_t total_jobs) {
    std::string line = ProgressLine(job);
    if (total_jobs > 1) line = absl::StrCat("[", finished_jobs, "/", total_jobs, " jobs] ", line);
    if (!io_.err_is_tty) {
      io_.err << line << "\n" << std::flush;
      return;
    }
    // Never wider than the terminal: a wrapped line cannot be redrawn with '\r'.
    const size_t width = io_.err_columns > 1 ? static_cast<size_t>(io_.err_columns - 1) : 79;
    if (line.size() > width) line.resize(width);
    io_.err << "\r\033[K" << line << std::flush;
    drawn_ = true;
  }

  void Done() {
    if (drawn_) io_.err << "\r\033[K" << std::flush;
    drawn_ = false;
  }

 private:
  Io& io_;
  bool drawn_ = false;
};

// Sleeps for the poll interval in short slices, so that Ctrl-C is answered promptly.
bool SleepUnlessInterrupted(Io& io) {
  auto until = std::chrono::steady_clock::now() + io.poll_interval;
  while (true) {
    if (io.interrupted != nullptr && io.interrupted->load()) return false;
    auto now = std::chrono::steady_clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(50)));
  }
}

// Lets SIGINT through to `interrupted` for the lifetime of the wait only; elsewhere Ctrl-C kills.
class CatchInterrupts {
 public:
  explicit CatchInterrupts(Io& io) : io_(io) {
    if (io_.catch_interrupts != nullptr) io_.catch_interrupts->store(true);
  }
  ~CatchInterrupts() {
    if (io_.catch_interrupts != nullptr) io_.catch_interrupts->store(false);
  }

 private:
  Io& io_;
};

}  // namespace

absl::StatusOr<std::vector<v1::Job>> WaitForJobs(const Connection& conn, const std::vector<std::string>& ids, Io& io) {
  CatchInterrupts catching(io);
  ProgressDisplay display(io);
  std::vector<v1::Job> jobs(ids.size());
  std::vector<bool> seen(ids.size(), false);
  int64_t unreachable_since = -1;
  auto count_finished = [&] {
    size_t n = 0;
    for (size_t i = 0; i < ids.size(); ++i) n += seen[i] && Finished(jobs[i].state());
    return n;
  };
  while (true) {
    size_t finished = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (seen[i] && Finished(jobs[i].state())) {
        ++finished;
        continue;
      }
      if (io.interrupted != nullptr && io.interrupted->load()) break;
      v1::GetJobRequest req;
      req.set_job_id(ids[i]);
      v1::Job job;
      // Short deadline: a hung coordinator must not delay Ctrl-C or the outage handling below.
      auto ctx = conn.Context(std::chrono::seconds(10));
      absl::Status s = api::FromGrpc(conn.stub->GetJob(ctx.get(), req, &job));
      if (!s.ok()) {
        // A restarting coordinator keeps its jobs: ride out a short outage instead of giving up.
        const int64_t now = io.now_ms();
        if (Transient(s.code()) && (unreachable_since < 0 || now - unreachable_since < kUnreachableMs)) {
          if (unreachable_since < 0) unreachable_since = now;
          break;
        }
        display.Done();
        return s;
      }
      unreachable_since = -1;
      const bool changed = !seen[i] || Changed(jobs[i], job);
      jobs[i] = std::move(job);
      seen[i] = true;
      if (Finished(jobs[i].state())) ++finished;
      if (changed) display.Show(jobs[i], count_finished(), ids.size());
    }
    if (io.interrupted != nullptr && io.interrupted->load()) {
      display.Done();
      return absl::CancelledError("interrupted");
    }
    if (finished == ids.size()) {
      display.Done();
      return jobs;
    }
    if (!SleepUnlessInterrupted(io)) {
      display.Done();
      return absl::CancelledError("interrupted");
    }
  }
}

}  // namespace kbench::client
