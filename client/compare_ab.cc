// The online A/B compare; see compare_ab.h.
#include "client/compare_ab.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/names.h"
#include "api/plugin_spec.h"
#include "client/job_spec.h"
#include "client/plugin_upload.h"
#include "client/units.h"
#include "client/wait.h"

namespace kbench::client {

std::vector<FlagSpec> AbCompareFlags() {
  return {
      {"base-plugin", "FILE", "Online A/B: the kernel library before the change (default: the workers' own suite)"},
      {"head-plugin", "FILE", "Online A/B: the kernel library after the change (default: the workers' own suite)"},
      {"pair", "BASE:HEAD", "Online A/B: compare base variant BASE with head variant HEAD (needs --op)", true},
      {"op", "NAME", "Online A/B: the op (default: every op both libraries have)"},
      {"variant", "V", "Online A/B: only these variants (default: every variant both sides have)", false, true},
      {"preset", "P", "Online A/B: problem preset (default: ci, each op's production shape; small for an op without one)", false, true},
      {"shape", "S", "Online A/B: explicit problem, e.g. rows=8192,cols=4096", true},
      {"dtype", "D", "Online A/B: dtypes (default: every dtype of the op)", false, true},
      {"rounds", "N", "Online A/B: alternating blocks per side (default 6)"},
      {"backend", "B", "Online A/B: run on cpu, cuda or any (default any)"},
      {"gpu", "MODEL", "Online A/B: only devices whose name contains MODEL, e.g. H100"},
      {"min-cc", "CC", "Online A/B: minimum compute capability"},
      {"selector-label", "K=V", "Online A/B: only workers with this label", true},
      {"label", "K=V", "Online A/B: job label (git_sha, branch, pr, ...)", true},
      {"cache", "MODE", "Online A/B: cold (default) or hot"},
      {"noise", "RSE", "Online A/B: noise target of each block (default 0.005)"},
      {"min-samples", "N", "Online A/B: minimum samples per side (default 10)"},
      {"max-samples", "N", "Online A/B: maximum samples per side (default 1000)"},
      {"min-time-ms", "MS", "Online A/B: minimum sampled time per side (default 100)"},
      {"max-time-ms", "MS", "Online A/B: time limit per side, split over the rounds (default 2000)"},
      {"warmup-ms", "MS", "Online A/B: warm-up of each side's first block (default 50)"},
      {"trials", "N", "Online A/B: seeded correctness trials (default 3)"},
      {"seed", "N", "Online A/B: base seed of the inputs (default 1)"},
      {"timeout-ms", "MS", "Online A/B: watchdog per side and problem (default 60000)"},
      {"hot-batch", "N", "Online A/B: launches per sample with --cache hot (default 20)"},
  };
}

bool WantsAbCompare(const ParsedArgs& args) {
  return args.Has("base-plugin") || args.Has("head-plugin") || args.Has("pair");
}

int RunAbCompare(const CommandSpec& spec, const ParsedArgs& args, const ConnectionFlags& globals,
                 const CompareOptions& options, Format format, Io& io) {
  if (args.Has("base") || args.Has("head"))
    return UsageError(io, spec, "--base/--head (offline files) and --base-plugin/--head-plugin/--pair (online) do not mix");
  absl::StatusOr<v1::JobSpec> job = BuildJobSpec(args, /*op_optional=*/true);
  if (!job.ok()) return UsageError(io, spec, job.status().message());
  v1::AbSpec* ab = job->mutable_ab();
  auto rounds = args.GetInt("rounds", 0);
  if (!rounds.ok()) return UsageError(io, spec, rounds.status().message());
  if (*rounds < 0 || *rounds > api::kMaxAbRounds)
    return UsageError(io, spec, absl::StrCat("--rounds: must be in [1, ", api::kMaxAbRounds, "]"));
  ab->set_rounds(static_cast<int32_t>(*rounds));
  for (const std::string& p : args.GetAll("pair")) {
    std::vector<std::string> parts = absl::StrSplit(p, ':');
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty())
      return UsageError(io, spec, absl::StrCat("--pair: expected BASE_VARIANT:HEAD_VARIANT, got '", p, "'"));
    v1::VariantPair* pair = ab->add_pairs();
    pair->set_base_variant(parts[0]);
    pair->set_head_variant(parts[1]);
  }
  if (absl::Status s = api::ValidatePluginFields(*job); !s.ok()) return UsageError(io, spec, s.message());
  if (!args.Has("base-plugin") && !args.Has("head-plugin") && ab->pairs().empty())
    return UsageError(io, spec, "comparing the workers' own suite with itself needs --pair BASE:HEAD");

  auto conn = Connect(args, globals);
  if (!conn.ok()) return UsageError(io, spec, conn.status().message());
  int exit = kExitOk;
  for (const char* flag : {"base-plugin", "head-plugin"}) {
    if (!args.Has(flag)) continue;
    std::optional<std::string> sha = UploadPluginFlag(*conn, "compare", flag, args.Get(flag), io, &exit);
    if (!sha) return exit;
    if (std::string(flag) == "base-plugin")
      ab->set_base_plugin_sha256(*sha);
    else
      ab->set_head_plugin_sha256(*sha);
  }

  v1::SubmitRequest req;
  *req.mutable_spec() = *job;
  v1::SubmitResponse resp;
  {
    auto ctx = conn->Context();
    if (auto s = api::FromGrpc(conn->stub->Submit(ctx.get(), req, &resp)); !s.ok())
      return CallError(io, "compare", s, conn->options.address);
  }
  io.err << "submitted A/B job " << resp.job_id() << "\n";
  const std::vector<std::string> ids = {resp.job_id()};
  auto jobs = WaitForJobs(*conn, ids, io);
  if (!jobs.ok()) {
    if (jobs.status().code() == absl::StatusCode::kCancelled) {
      io.err << kProgram << ": compare: interrupted; the job keeps running: " << kProgram << " status "
             << resp.job_id() << "\n";
      return kExitInterrupted;
    }
    return CallError(io, "compare", jobs.status(), conn->options.address);
  }
  const v1::Job& done = jobs->front();
  if (done.state() != v1::SUCCEEDED) {
    io.err << kProgram << ": compare: job " << done.job_id() << " " << api::JobStateName(done.state())
           << (done.error().empty() ? "" : ": ") << done.error() << "\n";
    return kExitFailure;
  }
  auto results = FetchResults(*conn, ids, /*include_samples=*/true, nullptr);
  if (!results.ok()) return CallError(io, "compare", results.status(), conn->options.address);
  if (results->empty()) {
    io.err << kProgram << ": compare: job " << done.job_id() << " returned no results; nothing to compare\n";
    return kExitUsage;
  }
  const CompareReport report = CompareAbResults(*results, options, format);
  io.out << report.text;
  return report.exit_status;
}

}  // namespace kbench::client
