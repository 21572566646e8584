// `compare`'s report: results of two sets paired by (op, variant, shape, dtype), each pair's runs
// (offline: each result; A/B: each block) judged by the one rule of api/stats/verdict.h: medians,
// change, p-value against the run-to-run spread, verdict, utilization and correctness; in text,
// Markdown (the PR comment), CSV or JSON. See CompareResults in commands.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/stats/verdict.h"
#include "api/names.h"
#include "client/commands.h"
#include "client/format.h"
#include "client/units.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace kbench::client {
namespace {

enum class Verdict { kSlower, kFaster, kSame, kAmbiguous, kNone };  // kNone: a side is not OK.

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kSlower: return "SLOWER";
    case Verdict::kFaster: return "FASTER";
    case Verdict::kSame: return "SAME";
    case Verdict::kAmbiguous: return "AMBIGUOUS";
    default: return "-";
  }
}

Verdict FromRule(api::ChangeVerdict v) {
  switch (v) {
    case api::ChangeVerdict::kSlower: return Verdict::kSlower;
    case api::ChangeVerdict::kFaster: return Verdict::kFaster;
    case api::ChangeVerdict::kSame: return Verdict::kSame;
    case api::ChangeVerdict::kAmbiguous: return Verdict::kAmbiguous;
  }
  return Verdict::kAmbiguous;
}

struct Pair {
  const v1::Result* base = nullptr;  // The first base run (for its labels, check and utilization).
  const v1::Result* head = nullptr;  // The first head run, or the first that is not OK.
  double base_median = 0, head_median = 0;  // Geometric means of the sides' run medians.
  int base_runs = 0, head_runs = 0;
  std::optional<double> change;  // (head - base) / base; none when a side has no median.
  std::optional<double> p;       // None when either side has too few samples or is not OK.
  std::optional<double> spread;  // Run-to-run spread the verdict allowed for.
  Verdict verdict = Verdict::kNone;
  bool newly_bad = false;        // Base OK, some head run not OK.
};

std::string Key(const v1::Result& r) {
  return absl::StrCat(r.op(), "\x1f", r.variant(), "\x1f", api::ShapeLabel(r.problem()), "\x1f",
                      api::DtypeName(r.problem().dtype()));
}

std::string Label(const v1::Result& r) {
  return absl::StrCat(r.op(), " ", r.variant(), " ", api::ShapeLabel(r.problem()), " ",
                      api::DtypeName(r.problem().dtype()));
}

std::optional<double> Utilization(const v1::Result& r) {
  for (const auto& c : r.roofline().ceilings())
    if (c.source() == "calibrated") return c.utilization();
  return std::nullopt;
}

std::string CheckName(const v1::Result& r) {
  if (r.status() == v1::OK) return "ok";
  return api::StatusName(r.status());
}

api::RunObservation RunOfSamples(std::span<const double> samples, double median_ns) {
  api::RunObservation run;
  run.median_ns = median_ns > 0 ? median_ns : api::Median(std::vector<double>(samples.begin(), samples.end()));
  run.within_rse = api::MedianRse(samples);
  return run;
}

// The runs of one result: each A/B block (Timing.block_sample_counts), else the result as one run.
// Lowers *fewest to the result's samples (all its blocks': a block may hold as few as 3).
void AddRuns(const v1::Result& r, std::vector<api::RunObservation>* runs, size_t* fewest) {
  const auto& t = r.timing();
  const std::span<const double> all(t.samples_ns().data(), t.samples_ns().size());
  int64_t total = 0;
  for (int32_t n : t.block_sample_counts()) total += n > 0 ? n : 0;
  if (t.block_sample_counts_size() > 1 && total == t.samples_ns_size()) {
    size_t at = 0;
    for (int32_t n : t.block_sample_counts()) {
      if (n <= 0) continue;
      runs->push_back(RunOfSamples(all.subspan(at, static_cast<size_t>(n)), 0));
      at += static_cast<size_t>(n);
    }
    *fewest = std::min(*fewest, all.size());
    return;
  }
  api::RunObservation run = RunOfSamples(all, t.median_ns());
  if (t.median_relative_standard_error() > 0) run.within_rse = t.median_relative_standard_error();
  runs->push_back(run);
  *fewest = std::min(*fewest, all.size());
}

// One pair: every base run against every head run of the same key (offline: each result a run;
// A/B: each block a run), by the one rule (api/stats/verdict.h).
Pair Analyze(const std::vector<const v1::Result*>& bases, const std::vector<const v1::Result*>& heads,
             const CompareOptions& o) {
  Pair p;
  p.base = bases.front();
  p.head = heads.front();
  const bool base_ok = std::any_of(bases.begin(), bases.end(), [](auto* r) { return r->status() == v1::OK; });
  for (const v1::Result* h : heads)
    if (h->status() != v1::OK) {
      p.head = h;
      break;
    }
  p.newly_bad = base_ok && p.head->status() != v1::OK;
  for (const v1::Result* b : bases)
    if (b->status() != v1::OK) p.base = b;
  if (p.base->status() != v1::OK || p.head->status() != v1::OK) return p;
  std::vector<api::RunObservation> base_runs, head_runs;
  size_t fewest = SIZE_MAX;
  for (const v1::Result* b : bases) AddRuns(*b, &base_runs, &fewest);
  for (const v1::Result* h : heads) AddRuns(*h, &head_runs, &fewest);
  const api::RunJudgment j = api::JudgeRuns(head_runs, base_runs, o);
  p.base_runs = j.baseline_runs;
  p.head_runs = j.current_runs;
  p.base_median = j.baseline_center_ns;
  p.head_median = j.current_runs > 0 && j.baseline_center_ns > 0 ? j.baseline_center_ns * (1 + j.change) : 0;
  p.verdict = Verdict::kAmbiguous;
  if (j.baseline_runs == 0 || j.current_runs == 0) return p;
  p.change = j.change;
  if (!api::EnoughSamples(fewest, fewest, o)) return p;
  p.p = j.p_value;
  p.spread = j.spread;
  p.verdict = FromRule(j.verdict);
  return p;
}

std::string PercentOr(std::optional<double> v, bool sign) {
  if (!v) return "-";
  return absl::StrCat(sign && *v >= 0 ? "+" : "", FormatPercent(*v));
}

std::string PValue(std::optional<double> p) {
  if (!p) return "-";
  return *p < 1e-4 ? "<0.0001" : FormatSig(*p, 2);
}

google::protobuf::Value Num(double v) {
  google::protobuf::Value x;
  x.set_number_value(v);
  return x;
}
google::protobuf::Value Str(std::string v) {
  google::protobuf::Value x;
  x.set_string_value(std::move(v));
  return x;
}
google::protobuf::Value NumOrNull(std::optional<double> v) {
  google::protobuf::Value x;
  if (v)
    x.set_number_value(*v);
  else
    x.set_null_value(google::protobuf::NULL_VALUE);
  return x;
}

// The cell of the variant column: its name, or "base vs head" when an A/B pair has two names.
std::string VariantCell(const Pair& p) {
  if (p.base->variant() == p.head->variant()) return p.base->variant();
  return absl::StrCat(p.base->variant(), " vs ", p.head->variant());
}

CompareReport Render(const std::vector<Pair>& pairs, const std::vector<const v1::Result*>& only_base,
                     const std::vector<const v1::Result*>& only_head, const CompareOptions& options, Format format);

}  // namespace

const char* JudgePair(const v1::Result& base, const v1::Result& head, const CompareOptions& options) {
  return VerdictName(Analyze({&base}, {&head}, options).verdict);
}

CompareReport CompareAbResults(const std::vector<v1::Result>& results, const CompareOptions& options, Format format) {
  // Each pair number has one base and one head result; a side left alone (a job cut short) is listed.
  std::map<int, std::pair<const v1::Result*, const v1::Result*>> by_pair;
  std::vector<const v1::Result*> only_base, only_head;
  for (const auto& r : results) {
    if (r.ab_side() == v1::AB_BASE) by_pair[r.ab_pair()].first = &r;
    if (r.ab_side() == v1::AB_HEAD) by_pair[r.ab_pair()].second = &r;
  }
  std::vector<Pair> pairs;
  for (const auto& [n, sides] : by_pair) {
    if (sides.first && sides.second)
      pairs.push_back(Analyze({sides.first}, {sides.second}, options));
    else if (sides.first)
      only_base.push_back(sides.first);
    else
      only_head.push_back(sides.second);
  }
  return Render(pairs, only_base, only_head, options, format);
}

CompareReport CompareResults(const std::vector<v1::Result>& base, const std::vector<v1::Result>& head,
                             const CompareOptions& options, Format format) {
  // Pair by key: every base result of a key (each one run) against every head result of it.
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::vector<const v1::Result*>, std::vector<const v1::Result*>>> by_key;
  for (const auto& r : base) {
    auto& sides = by_key[Key(r)];
    if (sides.first.empty() && sides.second.empty()) order.push_back(Key(r));
    sides.first.push_back(&r);
  }
  for (const auto& r : head) {
    auto& sides = by_key[Key(r)];
    if (sides.first.empty() && sides.second.empty()) order.push_back(Key(r));
    sides.second.push_back(&r);
  }
  std::vector<Pair> pairs;
  std::vector<const v1::Result*> only_base, only_head;
  for (const std::string& key : order) {
    const auto& [bases, heads] = by_key[key];
    if (!bases.empty() && !heads.empty())
      pairs.push_back(Analyze(bases, heads, options));
    else
      for (const v1::Result* r : bases.empty() ? heads : bases) (bases.empty() ? only_head : only_base).push_back(r);
  }
  return Render(pairs, only_base, only_head, options, format);
}

namespace {

CompareReport Render(const std::vector<Pair>& pairs, const std::vector<const v1::Result*>& only_base,
                     const std::vector<const v1::Result*>& only_head, const CompareOptions& options, Format format) {
  int slower = 0, faster = 0, same = 0, ambiguous = 0, incorrect = 0, failing = 0;
  for (const auto& p : pairs) {
    slower += p.verdict == Verdict::kSlower;
    faster += p.verdict == Verdict::kFaster;
    same += p.verdict == Verdict::kSame;
    ambiguous += p.verdict == Verdict::kAmbiguous;
    if (p.newly_bad) ++(p.head->status() == v1::INCORRECT ? incorrect : failing);
  }
  std::string summary = absl::StrCat(slower, " slower, ", faster, " faster, ", same, " unchanged, ", ambiguous,
                                     " ambiguous");
  if (incorrect > 0) absl::StrAppend(&summary, ", ", incorrect, " newly incorrect");
  if (failing > 0) absl::StrAppend(&summary, ", ", failing, " newly failing");
  CompareReport report;
  report.exit_status = slower + incorrect + failing > 0 ? kExitFailure : kExitOk;

  if (format == Format::kJson) {
    google::protobuf::Struct root;
    auto& f = *root.mutable_fields();
    auto& s = *f["summary"].mutable_struct_value()->mutable_fields();
    s["slower"] = Num(slower);
    s["faster"] = Num(faster);
    s["unchanged"] = Num(same);
    s["ambiguous"] = Num(ambiguous);
    s["newly_incorrect"] = Num(incorrect);
    s["newly_failing"] = Num(failing);
    s["threshold"] = Num(options.threshold);
    s["alpha"] = Num(options.alpha);
    auto* list = f["pairs"].mutable_list_value();
    for (const auto& p : pairs) {
      auto& o = *list->add_values()->mutable_struct_value()->mutable_fields();
      o["op"] = Str(p.base->op());
      o["variant"] = Str(p.base->variant());
      o["head_variant"] = Str(p.head->variant());
      o["shape"] = Str(api::ShapeLabel(p.base->problem()));
      o["dtype"] = Str(api::DtypeName(p.base->problem().dtype()));
      o["base_median_ns"] = Num(p.base_median);
      o["head_median_ns"] = Num(p.head_median);
      o["change_fraction"] = NumOrNull(p.change);
      o["p_value"] = NumOrNull(p.p);
      o["base_runs"] = Num(p.base_runs);
      o["head_runs"] = Num(p.head_runs);
      o["run_spread"] = NumOrNull(p.spread);
      o["verdict"] = Str(VerdictName(p.verdict));
      o["base_utilization"] = NumOrNull(Utilization(*p.base));
      o["head_utilization"] = NumOrNull(Utilization(*p.head));
      o["base_status"] = Str(api::StatusName(p.base->status()));
      o["head_status"] = Str(api::StatusName(p.head->status()));
    }
    for (auto [name, rs] : {std::pair{"only_in_base", &only_base}, std::pair{"only_in_head", &only_head}}) {
      auto* l = f[name].mutable_list_value();
      for (const auto* r : *rs) *l->add_values() = Str(Label(*r));
    }
    google::protobuf::util::JsonPrintOptions po;
    po.add_whitespace = true;
    if (!google::protobuf::util::MessageToJsonString(root, &report.text, po).ok()) report.text = "null\n";
    return report;
  }

  Table t;
  t.header = {"op", "variant", "shape", "dtype", "base", "head", "change", "p", "runs", "±run", "verdict",
              "util base", "util head", "check base", "check head"};
  t.numeric = {false, false, false, false, true, true, true, true, true, true, false, true, true, false, false};
  for (const auto& p : pairs) {
    const bool timed = p.verdict != Verdict::kNone;
    t.AddRow({p.base->op(), VariantCell(p), api::ShapeLabel(p.base->problem()),
              api::DtypeName(p.base->problem().dtype()), timed ? FormatDuration(p.base_median) : "-",
              timed ? FormatDuration(p.head_median) : "-", PercentOr(p.change, true), PValue(p.p),
              timed ? absl::StrCat(p.base_runs, "/", p.head_runs) : "-", PercentOr(p.spread, false),
              VerdictName(p.verdict), PercentOr(Utilization(*p.base), false), PercentOr(Utilization(*p.head), false),
              CheckName(*p.base), CheckName(*p.head)});
  }
  if (format == Format::kCsv) {
    report.text = RenderCsv(t);
    return report;
  }
  const bool md = format == Format::kMarkdown;
  std::string& out = report.text;
  if (md) absl::StrAppend(&out, "### kbench compare: ", pairs.size(), " pairs\n\n");
  absl::StrAppend(&out, md ? "**" : "", summary, md ? "**" : "", "\n\n");
  if (!pairs.empty()) out += md ? RenderMarkdown(t) : RenderText(t);
  absl::StrAppend(&out, "\n", md ? "_" : "", "threshold ", FormatPercent(options.threshold), ", alpha ",
                  FormatSig(options.alpha, 2),
                  "; one observation per run (its median; A/B: per block), judged against the run-to-run spread "
                  "(±run)",
                  md ? "_" : "", "\n");
  for (auto [name, rs] : {std::pair{"Only in base", &only_base}, std::pair{"Only in head", &only_head}}) {
    if (rs->empty()) continue;
    absl::StrAppend(&out, "\n", name, ":\n");
    for (const auto* r : *rs) absl::StrAppend(&out, md ? "- " : "  ", Label(*r), "\n");
  }
  return report;
}

}  // namespace
}  // namespace kbench::client
