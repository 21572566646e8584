// The plan of a job that names kernel libraries (JobSpec.plugin_sha256, JobSpec.ab): each library's
// catalog as its runner reports it, then the same validation as any job, per op; see planner.h.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/plugin_spec.h"
#include "api/validate.h"
#include "worker/plan/planner.h"
#include "worker/plan/settings.h"

namespace kbench::worker {
namespace {

using Library = PluginLibraries::Library;

const v1::OpInfo* FindOp(const std::vector<v1::OpInfo>& ops, const std::string& name) {
  for (const auto& op : ops)
    if (op.name() == name) return &op;
  return nullptr;
}

bool HasVariant(const v1::OpInfo& op, const std::string& name) {
  return std::any_of(op.variants().begin(), op.variants().end(), [&](const auto& v) { return v.name() == name; });
}

std::string OpNames(const std::vector<v1::OpInfo>& ops) {
  return absl::StrJoin(ops, ", ", [](std::string* out, const v1::OpInfo& o) { out->append(o.name()); });
}

std::string SideName(const std::string& sha) { return sha.empty() ? "the worker's own suite" : "plugin " + sha.substr(0, 12); }

// The library of one side: the worker's own suite for an empty hash, else the plugin.
absl::StatusOr<Library> LoadLibrary(const std::string& sha256, const std::string& field, const PlanTarget& target) {
  if (sha256.empty()) {
    Library own;  // No path: the runner's own copy of the suite.
    own.ops = target.builtin;
    return own;
  }
  if (target.plugins == nullptr)
    return absl::FailedPreconditionError(absl::StrCat(
        field, ": plugins are fetched from a coordinator; a job sent straight to a worker cannot bring one"));
  return target.plugins->Load(sha256, field);
}

}  // namespace

absl::StatusOr<JobPlan> PlanLibraryJob(const v1::JobSpec& spec, const PlanTarget& target) {
  if (!target.runner_child)
    return absl::FailedPreconditionError(
        "plugin and A/B jobs need a runner child (kbench-worker always starts one; an in-process runner refuses them): a plugin never loads into the "
        "worker");
  const bool ab = spec.has_ab();
  absl::StatusOr<Library> base = LoadLibrary(ab ? spec.ab().base_plugin_sha256() : spec.plugin_sha256(),
                                             ab ? "spec.ab.base_plugin_sha256" : "spec.plugin_sha256", target);
  if (!base.ok()) return base.status();
  absl::StatusOr<Library> head = Library{};
  if (ab) head = LoadLibrary(spec.ab().head_plugin_sha256(), "spec.ab.head_plugin_sha256", target);
  if (!head.ok()) return head.status();

  // The ops: the one asked for, or (A/B) every op both sides have.
  std::vector<std::string> ops;
  if (!spec.op().empty()) {
    if (!FindOp(base->ops, spec.op()))
      return absl::InvalidArgumentError(absl::StrCat("spec.op: op '", spec.op(), "' is not in ", SideName(base->sha256),
                                                     " (known: ", OpNames(base->ops), ")"));
    if (ab && !FindOp(head->ops, spec.op()))
      return absl::InvalidArgumentError(absl::StrCat("spec.op: op '", spec.op(), "' is not in the head, ",
                                                     SideName(head->sha256), " (known: ", OpNames(head->ops), ")"));
    ops.push_back(spec.op());
  } else {
    for (const auto& op : base->ops)
      if (FindOp(head->ops, op.name())) ops.push_back(op.name());
    if (ops.empty()) return absl::InvalidArgumentError("spec.op: the base and the head have no op in common");
  }
  const bool one_op = !spec.op().empty();

  JobPlan plan;
  plan.spec = spec;
  plan.settings = WithDefaults(spec.settings());
  plan.rounds = api::AbRounds(spec.ab());
  int32_t index = 0, pair = 0;
  for (const std::string& name : ops) {
    const v1::OpInfo& base_op = *FindOp(base->ops, name);
    v1::JobSpec resolved = spec;
    resolved.set_op(name);
    absl::Status s = api::ResolveAgainstOp(base_op, target.device_memory_bytes, &resolved);
    if (s.ok() && api::ExpandProblems(base_op, resolved).empty())
      s = absl::InvalidArgumentError(absl::StrCat("spec.problems: op '", name, "' selects no problem"));
    const v1::OpInfo* head_op = ab ? FindOp(head->ops, name) : nullptr;
    if (s.ok() && head_op && !std::equal(base_op.dims().begin(), base_op.dims().end(), head_op->dims().begin(),
                                         head_op->dims().end()))
      s = absl::InvalidArgumentError(absl::StrCat("spec.op: op '", name,
                                                  "' has other dims in the head than in the base; they cannot be compared"));
    if (!s.ok()) {
      if (one_op) return s;
      continue;  // Every common op: one that cannot honour the request is left out, not the job failed.
    }
    // The variants: explicit pairs, or every selected base variant the head has too.
    std::vector<std::pair<std::string, std::string>> pairs;
    if (ab && spec.ab().pairs_size() > 0) {
      for (int i = 0; i < spec.ab().pairs_size(); ++i) {
        const auto& p = spec.ab().pairs(i);
        if (!HasVariant(base_op, p.base_variant()))
          return absl::InvalidArgumentError(absl::StrCat("spec.ab.pairs[", i, "].base_variant: '", p.base_variant(),
                                                         "' is not a variant of '", name, "' in ", SideName(base->sha256)));
        if (!HasVariant(*head_op, p.head_variant()))
          return absl::InvalidArgumentError(absl::StrCat("spec.ab.pairs[", i, "].head_variant: '", p.head_variant(),
                                                         "' is not a variant of '", name, "' in ", SideName(head->sha256)));
        pairs.emplace_back(p.base_variant(), p.head_variant());
      }
    } else {
      for (const v1::VariantInfo* v : api::SelectVariants(base_op, resolved))
        if (!ab || HasVariant(*head_op, v->name())) pairs.emplace_back(v->name(), v->name());
    }
    for (const v1::Problem& p : api::ExpandProblems(base_op, resolved)) {
      for (const auto& [bv, hv] : pairs) {
        PlanItem item;
        item.first_index = index;
        item.op = name;
        item.problem = p;
        item.base = {bv, base->path, base->sha256};
        item.ab = ab;
        if (ab) {
          item.head = {hv, head->path, head->sha256};
          item.pair = pair++;
        }
        index += ab ? 2 : 1;
        plan.items.push_back(std::move(item));
      }
    }
  }
  if (plan.items.empty())
    return absl::InvalidArgumentError("spec: the job selects nothing to measure (no variant both sides have)");
  plan.results_total = index;
  return plan;
}

}  // namespace kbench::worker
