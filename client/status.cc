// `kbench-client status`: the state and progress of given jobs, or of the recent ones.
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "client/commands.h"
#include "client/format.h"

namespace kbench::client {
namespace {

absl::StatusOr<v1::JobState> ParseJobState(absl::string_view name) {
  std::string n = absl::AsciiStrToUpper(name);
  for (auto s : {v1::QUEUED, v1::RUNNING, v1::SUCCEEDED, v1::FAILED, v1::CANCELLED_JOB})
    if (n == api::JobStateName(s)) return s;
  return absl::InvalidArgumentError(
      absl::StrCat("--state: unknown state '", name, "' (known: queued, running, succeeded, failed, cancelled)"));
}

}  // namespace

const CommandSpec& StatusSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "status";
    s.positional = "[JOB_ID...]";
    s.summary = "Show jobs: id, op, state, progress, worker, attempts, age, error. Without ids: the recent jobs.";
    s.flags = {
        {"limit", "N", "Without ids: how many recent jobs (default 50, newest first)"},
        {"state", "STATE", "Without ids: only jobs in this state (queued, running, succeeded, failed, cancelled)"},
        FormatFlagSpec(),
    };
    for (auto& c : ConnectionFlagSpecs()) s.flags.push_back(c);
    s.details = "Exit status: 0 ok; 1 a job was not found or the service failed; 2 bad flags.";
    s.examples = {
        "kbench-client status j-abc123",
        "kbench-client status --state running --limit 10",
        "kbench-client status --format json j-abc123 j-def456",
    };
    return s;
  }();
  return spec;
}

int RunStatus(const std::vector<std::string>& argv, const ConnectionFlags& globals, Io& io) {
  const auto& spec = StatusSpec();
  ParsedArgs args;
  if (auto exit = ParseOrExit(spec, argv, io, &args)) return *exit;
  auto format = ParseFormat(args.Get("format", "table"));
  if (!format.ok()) return UsageError(io, spec, format.status().message());
  if (!args.positional.empty() && (args.Has("limit") || args.Has("state")))
    return UsageError(io, spec, "--limit and --state list recent jobs; they do not apply to given job ids");
  auto limit = args.GetInt("limit", 0);
  if (!limit.ok()) return UsageError(io, spec, limit.status().message());
  if (*limit < 0 || *limit > 100000) return UsageError(io, spec, "--limit: must be in [1, 100000]");
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  if (args.Has("state")) {
    auto s = ParseJobState(args.Get("state"));
    if (!s.ok()) return UsageError(io, spec, s.status().message());
    state = *s;
  }
  auto conn = Connect(args, globals);
  if (!conn.ok()) return UsageError(io, spec, conn.status().message());

  std::vector<v1::Job> jobs;
  int exit = kExitOk;
  if (args.positional.empty()) {
    v1::ListJobsRequest req;
    req.set_limit(static_cast<int32_t>(*limit));
    req.set_state(state);
    v1::ListJobsResponse resp;
    auto ctx = conn->Context();
    if (auto s = api::FromGrpc(conn->stub->ListJobs(ctx.get(), req, &resp)); !s.ok())
      return CallError(io, "status", s, conn->options.address);
    jobs.assign(resp.jobs().begin(), resp.jobs().end());
  } else {
    // Every id is looked up even when one is missing, so one typo does not hide the other jobs.
    for (const auto& id : args.positional) {
      v1::GetJobRequest req;
      req.set_job_id(id);
      v1::Job job;
      auto ctx = conn->Context();
      if (auto s = api::FromGrpc(conn->stub->GetJob(ctx.get(), req, &job)); !s.ok()) {
        if (s.code() != absl::StatusCode::kNotFound) return CallError(io, "status", s, conn->options.address);
        io.err << kProgram << ": status: " << id << ": not found\n";
        exit = kExitFailure;
        continue;
      }
      jobs.push_back(std::move(job));
    }
  }
  if (!jobs.empty() || *format == Format::kJson || *format == Format::kCsv || exit == kExitOk)
    io.out << FormatJobs(jobs, *format, io.now_ms());
  return exit;
}

}  // namespace kbench::client
