// `kbench-client results`: the results of one or more jobs as a table, Markdown, JSON or CSV.
#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "client/commands.h"
#include "client/format.h"

namespace kbench::client {

absl::StatusOr<std::vector<v1::Result>> FetchResults(const Connection& conn, const std::vector<std::string>& ids,
                                                     bool include_samples, std::vector<v1::Job>* jobs) {
  std::vector<v1::Result> out;
  for (const auto& id : ids) {
    v1::GetResultsRequest req;
    req.set_job_id(id);
    req.set_include_samples(include_samples);
    v1::GetResultsResponse resp;
    auto ctx = conn.Context();
    if (auto s = api::FromGrpc(conn.stub->GetResults(ctx.get(), req, &resp)); !s.ok())
      return absl::Status(s.code(), absl::StrCat(id, ": ", s.message()));
    for (auto& r : *resp.mutable_results()) out.push_back(std::move(r));
    if (jobs != nullptr) jobs->push_back(resp.job());
  }
  return out;
}

const CommandSpec& ResultsSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "results";
    s.positional = "JOB_ID...";
    s.summary = "Show the results of jobs: timing, bandwidth, FLOP/s, roofline utilization, correctness.";
    s.flags = {
        FormatFlagSpec(),
        {"samples", "", "Fetch the raw samples (json: timing.samples_ns; csv: samples_ns; table: min/p10/p90/max)"},
    };
    for (auto& c : ConnectionFlagSpecs()) s.flags.push_back(c);
    s.details =
        "Table columns: median time, ±RSE within-run (relative standard error of the median over this run's samples;\n"
        "runs differ by more: `history` shows a series' run-to-run spread), achieved GB/s and GFLOP/s,\n"
        "%BW and %FLOP of the calibrated ceilings, util (roofline floor / median), bound class, correctness\n"
        "check and sample count; one table per device. csv has raw numbers (ns, bytes/s); json is an array\n"
        "of kbench.v1.Result messages with proto field names.\n"
        "Exit status: 0 ok; 1 the service failed or a job was not found; 2 bad flags.";
    s.examples = {
        "kbench-client results j-abc123",
        "kbench-client results j-abc123 j-def456 --format md",
        "kbench-client results j-abc123 --format csv --samples > results.csv",
    };
    return s;
  }();
  return spec;
}

int RunResults(const std::vector<std::string>& argv, const ConnectionFlags& globals, Io& io) {
  const auto& spec = ResultsSpec();
  ParsedArgs args;
  if (auto exit = ParseOrExit(spec, argv, io, &args)) return *exit;
  if (args.positional.empty()) return UsageError(io, spec, "needs at least one JOB_ID");
  auto format = ParseFormat(args.Get("format", "table"));
  if (!format.ok()) return UsageError(io, spec, format.status().message());
  auto conn = Connect(args, globals);
  if (!conn.ok()) return UsageError(io, spec, conn.status().message());
  std::vector<v1::Job> jobs;
  auto results = FetchResults(*conn, args.positional, args.GetBool("samples"), &jobs);
  if (!results.ok()) return CallError(io, "results", results.status(), conn->options.address);
  // Partial results are legitimate (a running job); say so, on stderr so that the output stays clean.
  for (const auto& j : jobs) {
    if (j.state() == v1::QUEUED || j.state() == v1::RUNNING)
      io.err << "note: " << j.job_id() << " is " << api::JobStateName(j.state()) << "; results so far\n";
    else if (j.state() == v1::FAILED)
      io.err << "note: " << j.job_id() << " FAILED" << (j.error().empty() ? "" : ": ") << j.error() << "\n";
  }
  io.out << FormatResults(*results, *format, args.GetBool("samples"));
  return kExitOk;
}

}  // namespace kbench::client
