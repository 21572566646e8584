// `kbench-client compare`: offline before/after comparison of two result sets (JSON files from
// `results --format json --samples`); exit status 1 on a significant regression or a newly failing
// result, so that CI can gate a pull request on it. The report itself is in format_compare.cc.
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/commands.h"
#include "client/compare_ab.h"
#include "client/format.h"
#include "google/protobuf/util/json_util.h"

namespace kbench::client {
namespace {

// The results of a JSON array of kbench.v1.Result messages; errors name the file.
absl::StatusOr<std::vector<v1::Result>> ReadResults(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read the file"));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (!absl::StartsWith(absl::StripLeadingAsciiWhitespace(text), "["))
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a JSON array of results (from `results JOB --format json --samples`)"));
  // The array as the `results` of a GetResultsResponse: protobuf's JSON parser reads messages, not arrays.
  v1::GetResultsResponse wrapped;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  auto status = google::protobuf::util::JsonStringToMessage(absl::StrCat("{\"results\":", text, "}"), &wrapped, options);
  if (!status.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": invalid results JSON: ", std::string(status.message())));
  // A gate must not pass on nothing measured: an empty array, or entries with no op (`[null]`, `[{}]`).
  if (wrapped.results().empty())
    return absl::InvalidArgumentError(absl::StrCat(path, ": holds no results; nothing to compare"));
  for (int i = 0; i < wrapped.results_size(); ++i)
    if (wrapped.results(i).op().empty() || wrapped.results(i).variant().empty())
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": entry ", i, " is not a result (no op or variant); nothing to compare"));
  return std::vector<v1::Result>(wrapped.results().begin(), wrapped.results().end());
}

}  // namespace

const CommandSpec& CompareSpec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "compare";
    s.summary = "Compare before/after: two result files offline, or two kernel libraries in one A/B job.";
    s.flags = {
        {"base", "FILE", "Offline: results before the change, JSON from `results JOB --format json --samples`"},
        {"head", "FILE", "Offline: results after the change, same format"},
        {"threshold", "FRACTION",
         absl::StrCat("Least change of the median that counts (default ", api::VerdictRule{}.threshold, ": ",
                      api::VerdictRule{}.threshold * 100, "%)")},
        {"alpha", "P", absl::StrCat("Two-sided significance level over runs (default ", api::VerdictRule{}.alpha, ")")},
        {"format", "FORMAT", "Output: table, md (the PR comment), json or csv (default table)"},
    };
    for (auto& f : AbCompareFlags()) s.flags.push_back(f);
    for (auto& c : ConnectionFlagSpecs()) s.flags.push_back(c);  // Accepted like everywhere; unused offline.
    s.details =
        "Offline (--base, --head): results are paired by (op, variant, shape, dtype); a key that appears several\n"
        "times on a side (result files of repeated jobs concatenated) gives that side several runs.\n"
        "Online (--base-plugin, --head-plugin, --pair): both kernel libraries are uploaded (skipped when the\n"
        "coordinator has them; needs a token with the plugin role), and one A/B job measures base and head on one\n"
        "worker in alternating blocks; every op both have (or --op), every variant both have (or --pair).\n"
        "Either side left out is the workers' own suite. Progress on stderr, the report on stdout.\n"
        "The verdict (the coordinator's history uses the same rule): each run counts once, by its median (an A/B\n"
        "block is a run). The change is the head runs' geometric mean over the base runs'; its p-value and\n"
        "interval come from the run-to-run spread (measured from the runs when a side has several, else an\n"
        "assumed 1%; never below 0.3% nor the runs' within-run error), shown as \"±run\". SLOWER or FASTER:\n"
        "p < alpha and the change beyond the threshold; SAME: the change's 80% interval lies within the\n"
        "threshold; AMBIGUOUS otherwise (too noisy, too few runs, or fewer than " +
        absl::StrCat(api::VerdictRule{}.min_samples, " samples in a run).\n") +
        "Exit status: 0 ok; 1 some pair is SLOWER, or a head result is not OK where the base was OK;\n"
        "2 bad flags, unreadable files, or a side without results (nothing measured is never a pass).";
    s.examples = {
        "kbench-client results j-main --format json --samples > base.json",
        "kbench-client compare --base base.json --head head.json --format md",
        "kbench-client compare --base-plugin base.so --head-plugin head.so --gpu H100 --format md",
        "kbench-client compare --op rmsnorm --pair cuda_v1_naive:cuda_v5_vec16 --shape rows=8192,cols=4096 --dtype bf16",
    };
    return s;
  }();
  return spec;
}

int RunCompare(const std::vector<std::string>& argv, const ConnectionFlags& globals, Io& io) {
  const auto& spec = CompareSpec();
  ParsedArgs args;
  if (auto exit = ParseOrExit(spec, argv, io, &args)) return *exit;
  auto format = ParseFormat(args.Get("format", "table"));
  if (!format.ok()) return UsageError(io, spec, format.status().message());
  CompareOptions options;
  auto threshold = args.GetDouble("threshold", options.threshold);
  if (!threshold.ok()) return UsageError(io, spec, threshold.status().message());
  if (!(*threshold >= 0)) return UsageError(io, spec, "--threshold: must be >= 0");
  auto alpha = args.GetDouble("alpha", options.alpha);
  if (!alpha.ok()) return UsageError(io, spec, alpha.status().message());
  if (!(*alpha > 0 && *alpha < 1)) return UsageError(io, spec, "--alpha: must be in (0, 1)");
  options.threshold = *threshold;
  options.alpha = *alpha;
  if (WantsAbCompare(args)) return RunAbCompare(spec, args, globals, options, *format, io);
  if (args.Get("base").empty() || args.Get("head").empty())
    return UsageError(io, spec, "--base and --head are required (or --base-plugin/--head-plugin for an A/B job)");
  for (const auto& f : AbCompareFlags())
    if (args.Has(f.name)) return UsageError(io, spec, absl::StrCat("--", f.name, ": only with --base-plugin, --head-plugin or --pair"));

  auto base = ReadResults(args.Get("base"));
  if (!base.ok()) return UsageError(io, spec, absl::StrCat("--base: ", base.status().message()));
  auto head = ReadResults(args.Get("head"));
  if (!head.ok()) return UsageError(io, spec, absl::StrCat("--head: ", head.status().message()));
  const CompareReport report = CompareResults(*base, *head, options, *format);
  io.out << report.text;
  return report.exit_status;
}

}  // namespace kbench::client
