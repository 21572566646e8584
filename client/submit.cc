// `kbench-client submit`: turns flags into a JobSpec (or one per op with --suite), submits it, and
// with --wait follows the jobs to the end and prints their results.
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/names.h"
#include "client/commands.h"
#include "client/custom_source.h"
#include "client/format.h"
#include "client/job_spec.h"
#include "client/plugin_upload.h"
#include "client/wait.h"

namespace kbench::client {
namespace {

std::vector<FlagSpec> Flags() {
  std::vector<FlagSpec> f = {
      {"op", "NAME", "Op to run, e.g. rmsnorm (required unless --suite)"},
      {"variant", "V", "Variant to run (default: every variant of the op)", false, true},
      {"preset", "P", "Problem preset of the op: canonical, edge, small, ...", false, true},
      {"shape", "S",
       "Explicit problem: M=1,N=4096,K=4096 (named) or 8192x4096 (op's dim order), then the op's flags (8192x32x8x128,gptj); "
       "dims the op derives (kernels lists them) may be left out",
       true},
      {"dtype", "D", "Dtype: f32, bf16, f16, tf32, fp8_e4m3 (default: every dtype of the op)", false, true},
      {"cache", "MODE", "cold (flush L2 before each sample, default) or hot (back-to-back launches)"},
      {"noise", "RSE", "Stop when the median's relative standard error is under this (default 0.005)"},
      {"min-samples", "N", "Minimum samples per problem (default 10)"},
      {"max-samples", "N", "Maximum samples per problem (default 1000)"},
      {"min-time-ms", "MS", "Minimum sampled time before the noise test may stop (default 100)"},
      {"max-time-ms", "MS", "Time limit per (variant, problem) (default 2000)"},
      {"warmup-ms", "MS", "Warm-up per (variant, problem) (default 50)"},
      {"trials", "N", "Seeded correctness trials before timing (default 3)"},
      {"seed", "N", "Base seed of the input generator (default 1)"},
      {"timeout-ms", "MS", "Watchdog per (variant, problem), check included (default 60000)"},
      {"hot-batch", "N", "Launches per sample with --cache hot (default 20)"},
      {"backend", "B", "Run on cpu, cuda or any (default any)"},
      {"gpu", "MODEL", "Only devices whose name contains MODEL, e.g. H100"},
      {"min-cc", "CC", "Minimum compute capability, e.g. 90 or 9.0"},
      {"selector-label", "K=V", "Only workers with this label", true},
      {"label", "K=V", "Job label: git_sha, branch, pr, suite_version or free-form", true},
      {"idempotency-key", "KEY", "Resubmitting with the same key returns the first job (with --suite: KEY/op)"},
      {"plugin", "FILE", "Measure the variants of this kernel library (a build of libkbench_kernels.so, uploaded) instead of the workers' own suite"},
      {"suite", "NAME", "Submit a suite instead of one op; 'default': every op, its small preset, all variants"},
      {"wait", "", "Follow the jobs (progress on stderr), then print their results"},
      {"samples", "", "With --wait: fetch the raw samples (json, csv) and add min/p10/p90/max (table, md)"},
      FormatFlagSpec(),
  };
  for (auto& c : CustomSourceFlagSpecs()) f.push_back(c);  // --source FILE and its launch flags
  for (auto& c : ConnectionFlagSpecs()) f.push_back(c);
  return f;
}

// --suite default: one job per op of the catalog, its small preset, every variant. Ops that cannot
// honour the other flags (none of the dtypes, no variant of the backend) are left out, with a note.
absl::StatusOr<std::vector<v1::JobSpec>> SuiteSpecs(const v1::JobSpec& base, const Connection& conn, Io& io) {
  v1::ListKernelsResponse catalog;
  auto ctx = conn.Context();
  if (auto s = api::FromGrpc(conn.stub->ListKernels(ctx.get(), {}, &catalog)); !s.ok()) return s;
  std::vector<v1::JobSpec> specs;
  for (const auto& op : catalog.ops()) {
    v1::JobSpec spec = base;
    spec.set_op(op.name());
    spec.clear_dtypes();
    for (int d : base.dtypes())
      if (std::find(op.dtypes().begin(), op.dtypes().end(), d) != op.dtypes().end())
        spec.add_dtypes(static_cast<v1::Dtype>(d));
    if (!base.dtypes().empty() && spec.dtypes().empty()) {
      io.err << "note: skipping " << op.name() << ": none of the requested dtypes\n";
      continue;
    }
    const auto backend = base.selector().backend();
    if (backend != v1::BACKEND_UNSPECIFIED && std::none_of(op.variants().begin(), op.variants().end(),
                                                           [&](const auto& v) { return v.backend() == backend; })) {
      io.err << "note: skipping " << op.name() << ": no " << api::BackendName(backend) << " variant\n";
      continue;
    }
    specs.push_back(std::move(spec));
  }
  if (specs.empty()) return absl::FailedPreconditionError("the suite selects no op (is any worker registered?)");
  return specs;
}

// A job failed, or a result says the kernel is wrong or broken: the run is not a success.
bool IsFailure(const v1::Result& r) {
  return r.status() == v1::INCORRECT || r.status() == v1::RUNTIME_ERROR || r.status() == v1::TIMEOUT ||
         r.status() == v1::COMPILE_ERROR;
}

int WaitAndReport(const Connection& conn, const std::vector<std::string>& ids, const ParsedArgs& args, Format format,
                  Io& io) {
  auto jobs = WaitForJobs(conn, ids, io);
  if (!jobs.ok()) {
    if (jobs.status().code() == absl::StatusCode::kCancelled) {
      io.err << kProgram << ": submit: interrupted; the job" << (ids.size() > 1 ? "s keep" : " keeps")
             << " running: " << kProgram << " status " << absl::StrJoin(ids, " ") << "\n";
      for (const auto& id : ids) io.out << id << "\n";
      return kExitInterrupted;
    }
    int rc = CallError(io, "submit", jobs.status(), conn.options.address);
    io.err << "the jobs may still run: " << kProgram << " status " << absl::StrJoin(ids, " ") << "\n";
    return rc;
  }
  bool failed = false;
  for (const auto& j : *jobs) {
    if (j.state() == v1::SUCCEEDED) continue;
    failed = true;
    io.err << kProgram << ": submit: job " << j.job_id() << " " << api::JobStateName(j.state())
           << (j.error().empty() ? "" : ": ") << j.error() << "\n";
  }
  auto results = FetchResults(conn, ids, args.GetBool("samples"), nullptr);
  if (!results.ok()) return CallError(io, "submit", results.status(), conn.options.address);
  io.out << FormatResults(*results, format, args.GetBool("samples"));
  for (const auto& r : *results) failed = failed || IsFailure(r);
  return failed ? kExitFailure : kExitOk;
}

}  // namespace

const CommandSpec& SubmitSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "submit";
    s.summary = "Submit a benchmark job (or a suite of jobs); with --wait, follow it and print the results.";
    s.flags = Flags();
    s.details =
        "Without --wait, prints the job id(s), one per line. With --wait, shows progress on stderr and prints\n"
        "the results table to stdout. Ctrl-C while waiting leaves the jobs running and prints their ids.\n"
        "Exit status: 0 all jobs succeeded and no result is INCORRECT, RUNTIME_ERROR, TIMEOUT or COMPILE_ERROR;\n"
        "1 otherwise, or the service failed; 2 bad flags or a request the coordinator rejected; 130 interrupted.";
    s.examples = {
        "kbench-client submit --op rmsnorm --dtype bf16 --shape 8192x4096 --wait",
        "kbench-client submit --op gemm --variant cublas,v3_tiled --shape M=1,N=4096,K=4096 --dtype f32,bf16",
        "kbench-client submit --op attention --shape B=8,H=16,H_kv=16,N_q=4096,N_kv=4096,d=128,causal --dtype bf16",
        "kbench-client submit --op w4a16_gemm --shape 1x14336x4096 --wait   # K_words, groups derived",
        "kbench-client submit --op softmax --preset canonical --cache hot --noise 0.002 --gpu H100 --min-cc 9.0",
        "kbench-client submit --suite default --backend cpu --wait --format md",
        "kbench-client submit --op vector_add --label git_sha=abc123 --label pr=42 --idempotency-key pr42-abc123",
        "kbench-client submit --op rmsnorm --source my_rmsnorm.cu --gpu H100 --wait",
        "kbench-client submit --op rmsnorm --plugin build/lib/libkbench_kernels.so --wait",
        "kbench-client submit --op vector_add --source add.ptx --dtype f32 --block 128 --grid 'cdiv(N, block_x)' --wait",
    };
    return s;
  }();
  return spec;
}

int RunSubmit(const std::vector<std::string>& argv, const ConnectionFlags& globals, Io& io) {
  const auto& spec = SubmitSpec();
  ParsedArgs args;
  if (auto exit = ParseOrExit(spec, argv, io, &args)) return *exit;
  if (!args.positional.empty()) return UsageError(io, spec, "takes no arguments");
  auto format = ParseFormat(args.Get("format", "table"));
  if (!format.ok()) return UsageError(io, spec, format.status().message());
  if (!args.GetBool("wait")) {
    // Without --wait the output is job ids; a format or samples request would be silently ignored.
    for (const char* f : {"format", "samples"})
      if (args.Has(f))
        return UsageError(io, spec, absl::StrCat("--", f, ": only with --wait (without it, submit prints job ids)"));
  }
  auto base = BuildJobSpec(args);
  if (!base.ok()) return UsageError(io, spec, base.status().message());
  auto conn = Connect(args, globals);
  if (!conn.ok()) return UsageError(io, spec, conn.status().message());

  if (args.Has("plugin")) {
    if (args.Has("suite")) return UsageError(io, spec, "--plugin: cannot be combined with --suite");
    int exit = kExitOk;
    std::optional<std::string> sha = UploadPluginFlag(*conn, "submit", "plugin", args.Get("plugin"), io, &exit);
    if (!sha) return exit;
    base->set_plugin_sha256(*sha);
  }
  std::vector<v1::JobSpec> specs = {*base};
  if (args.Has("suite")) {
    auto suite = SuiteSpecs(*base, *conn, io);
    if (!suite.ok()) return CallError(io, "submit", suite.status(), conn->options.address);
    specs = std::move(*suite);
  }
  const bool wait = args.GetBool("wait");
  std::vector<std::string> ids;
  for (const auto& s : specs) {
    v1::SubmitRequest req;
    *req.mutable_spec() = s;
    if (args.Has("idempotency-key")) {
      // One key for several jobs would fold them all into the first; derive one per op.
      req.set_idempotency_key(specs.size() > 1 ? absl::StrCat(args.Get("idempotency-key"), "/", s.op())
                                               : args.Get("idempotency-key"));
    }
    v1::SubmitResponse resp;
    auto ctx = conn->Context();
    if (auto st = api::FromGrpc(conn->stub->Submit(ctx.get(), req, &resp)); !st.ok()) {
      if (!ids.empty()) io.err << "already submitted: " << absl::StrJoin(ids, " ") << "\n";
      if (specs.size() > 1) io.err << "while submitting op " << s.op() << ":\n";
      return CallError(io, "submit", st, conn->options.address);
    }
    if (resp.deduplicated())
      io.err << "note: " << resp.job_id() << " is an earlier job with the same idempotency key\n";
    ids.push_back(resp.job_id());
    if (wait) {
      if (specs.size() > 1) io.err << "submitted " << resp.job_id() << " " << s.op() << "\n";
    } else {
      io.out << resp.job_id() << "\n" << std::flush;  // Flushed: a script may read ids while a suite goes on.
    }
  }
  if (!wait) return kExitOk;
  return WaitAndReport(*conn, ids, args, *format, io);
}

}  // namespace kbench::client
