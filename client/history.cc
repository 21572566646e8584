// `kbench-client history`: the performance history of an op's series with each result's regression
// verdict; exit status 1 when the newest point of a series is SLOWER, so that CI can gate on it.
#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "client/commands.h"
#include "client/format.h"

namespace kbench::client {

const CommandSpec& HistorySpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "history";
    s.summary = "Show the performance history of an op's series, newest first, with regression verdicts.";
    s.flags = {
        {"op", "OP", "The op (required), e.g. rmsnorm"},
        {"variant", "VARIANT", "Only this variant (default: every variant)"},
        {"gpu", "MODEL", "Only devices whose name contains MODEL, case-insensitive, e.g. H100 (default: every device)"},
        {"shape", "SHAPE",
         "Only this shape, as submit takes it: 8192x4096, 8192x32x8x128,gptj, M=1,N=4096,K=4096; dims the op derives "
         "may be left out (default: every shape)"},
        {"dtype", "DTYPE", "Only this dtype, e.g. bf16 (default: every dtype)"},
        {"cache", "MODE", "Only series measured with this cache mode: cold or hot (default: both)"},
        {"hot-batch", "N", "Only HOT series of this many launches per sample (default: every batch)"},
        {"backend", "NAME", "Only this backend: cuda or cpu (default: every backend)"},
        {"limit", "N", "Points to return over all series, newest first (default 100, at most 1000)"},
        {"regressions", "", "List only the series whose newest point changed (SLOWER or FASTER)"},
        FormatFlagSpec(),
    };
    for (auto& c : ConnectionFlagSpecs()) s.flags.push_back(c);
    s.details =
        "A series is (op, variant, shape, dtype, cache mode, hot batch, GPU model, backend): a HOT result is\n"
        "never judged against COLD runs, nor one batch against another.\nEach table is one series under a line with its\n"
        "baseline (the geometric mean of the main branch's recent run medians) and its run-to-run spread (the\n"
        "relative sd of those run medians: what one run may differ from the next; a result's ±RSE is only the\n"
        "within-run error). Per point: job, finish time (UTC), median, the series' run-to-run spread (±run),\n"
        "roofline utilization, verdict (SAME, SLOWER, FASTER, AMBIGUOUS, NO_BASELINE), change of the median\n"
        "against the baseline, p-value of that change against the run-to-run spread, branch and git sha.\n"
        "The verdict (the same rule as `compare`): SLOWER/FASTER when significant and beyond the threshold,\n"
        "SAME when the change's interval lies within the threshold, AMBIGUOUS otherwise.\n"
        "--regressions lists only the series whose newest point is SLOWER or FASTER.\n"
        "A series an admin muted (`series mute`) shows its verdicts as e.g. SLOWER (muted) and fails nothing.\n"
        "Exit status: 0 ok; 1 the newest point of some series is SLOWER, not muted (a regression: CI can gate on it;\n"
        "the series are named on stderr), or the service failed; 2 bad flags or invalid request.";
    s.examples = {
        "kbench-client history --op rmsnorm",
        "kbench-client history --op rmsnorm --variant v5_tma --gpu H100 --shape 8192x4096 --dtype bf16",
        "kbench-client history --op softmax --limit 20 --format md",
        "kbench-client history --op rmsnorm --gpu H200 --regressions",
        "kbench-client history --op vector_add --cache hot --hot-batch 20",
    };
    return s;
  }();
  return spec;
}

int RunHistory(const std::vector<std::string>& argv, const ConnectionFlags& globals, Io& io) {
  const auto& spec = HistorySpec();
  ParsedArgs args;
  if (auto exit = ParseOrExit(spec, argv, io, &args)) return *exit;
  auto format = ParseFormat(args.Get("format", "table"));
  if (!format.ok()) return UsageError(io, spec, format.status().message());
  if (args.Get("op").empty()) return UsageError(io, spec, "--op is required");
  auto limit = args.GetInt("limit", 0);
  if (!limit.ok()) return UsageError(io, spec, limit.status().message());
  if (*limit < 0 || *limit > 1000) return UsageError(io, spec, "--limit: must be in [1, 1000]");

  v1::GetHistoryRequest req;
  req.set_op(args.Get("op"));
  req.set_variant(args.Get("variant"));
  req.set_gpu_model(args.Get("gpu"));
  req.set_shape(args.Get("shape"));  // the coordinator resolves it
  req.set_limit(static_cast<int32_t>(*limit));
  if (args.Has("dtype")) {
    auto dtype = api::ParseDtype(args.Get("dtype"));
    if (!dtype.ok()) return UsageError(io, spec, absl::StrCat("--dtype: ", dtype.status().message()));
    req.set_dtype(*dtype);
  }
  if (args.Has("cache")) {
    auto mode = api::ParseCacheMode(args.Get("cache"));
    if (!mode.ok()) return UsageError(io, spec, absl::StrCat("--cache: ", mode.status().message()));
    req.set_cache_mode(*mode);
  }
  if (args.Has("hot-batch")) {
    auto batch = args.GetInt("hot-batch", 0);
    if (!batch.ok()) return UsageError(io, spec, batch.status().message());
    if (*batch < 1 || *batch > 100000) return UsageError(io, spec, "--hot-batch: must be in [1, 100000]");
    req.set_hot_batch(static_cast<int32_t>(*batch));
  }
  if (args.Has("backend")) {
    auto backend = api::ParseBackend(args.Get("backend"));
    if (!backend.ok()) return UsageError(io, spec, absl::StrCat("--backend: ", backend.status().message()));
    req.set_backend(*backend);
  }
  auto conn = Connect(args, globals);
  if (!conn.ok()) return UsageError(io, spec, conn.status().message());

  v1::GetHistoryResponse resp;
  auto ctx = conn->Context();
  if (auto s = api::FromGrpc(conn->stub->GetHistory(ctx.get(), req, &resp)); !s.ok())
    return CallError(io, "history", s, conn->options.address);
  const bool matched = !resp.points().empty();
  if (args.Has("regressions")) resp = OnlyChanged(resp);
  io.out << FormatHistory(req.op(), resp, *format);
  if (!matched) io.err << kProgram << ": history: no results match\n";
  else if (resp.points().empty()) io.err << kProgram << ": history: no series changed\n";
  const std::vector<std::string> regressed = RegressedSeries(req.op(), resp);
  for (const auto& series : regressed) io.err << kProgram << ": history: regression: " << series << "\n";
  return regressed.empty() ? kExitOk : kExitFailure;
}

}  // namespace kbench::client
