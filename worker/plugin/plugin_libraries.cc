// Plugin and A/B jobs: fetch, describe, plan, measure; see plugin_job.h.
#include "worker/plugin/plugin_job.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/names.h"
#include "api/plugin_spec.h"
#include "api/validate.h"
#include "worker/settings.h"

namespace kbench::worker {
namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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

}  // namespace

absl::StatusOr<PluginJobRunner::Library> PluginJobRunner::LoadLibrary(const std::string& sha256,
                                                                     const std::string& field) {
  Library lib;
  lib.sha256 = sha256;
  if (sha256.empty()) {
    lib.ops = builtin_.ops();
    return lib;
  }
  absl::StatusOr<std::string> path = cache_->Ensure(sha256, fetch_);
  if (!path.ok())
    return absl::FailedPreconditionError(absl::StrCat(field, ": cannot fetch plugin ", sha256, ": ", path.status().message()));
  lib.path = *path;
  runner::RunnerRequest req;
  req.set_kind(runner::RunnerRequest::DESCRIBE);
  req.set_plugin_path(lib.path);
  absl::StatusOr<runner::RunnerResponse> resp = backend_->CallRunner(req, std::chrono::seconds(60));
  if (!resp.ok())
    return absl::FailedPreconditionError(absl::StrCat(field, ": loading plugin ", sha256, " failed: ", resp.status().message()));
  if (!resp->error().empty())
    return absl::FailedPreconditionError(absl::StrCat(field, ": plugin ", sha256, " refused: ", resp->error()));
  lib.ops.assign(resp->catalog().begin(), resp->catalog().end());
  return lib;
}

absl::StatusOr<PluginJobPlan> PluginJobRunner::Plan(const v1::JobSpec& spec) {
  if (backend_ == nullptr)
    return absl::FailedPreconditionError(
        "plugin and A/B jobs need a runner child (kbench-worker --isolation process): a plugin never loads into the "
        "worker");
  if (absl::Status s = api::ValidateSpecStructure(spec); !s.ok()) return s;
  const bool ab = spec.has_ab();
  absl::StatusOr<Library> base = LoadLibrary(ab ? spec.ab().base_plugin_sha256() : spec.plugin_sha256(),
                                             ab ? "spec.ab.base_plugin_sha256" : "spec.plugin_sha256");
  if (!base.ok()) return base.status();
  absl::StatusOr<Library> head = Library{};
  if (ab) head = LoadLibrary(spec.ab().head_plugin_sha256(), "spec.ab.head_plugin_sha256");
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

  PluginJobPlan plan;
  plan.spec = spec;
  plan.settings = WithDefaults(spec.settings());
  plan.rounds = api::AbRounds(spec.ab());
  int32_t index = 0, pair = 0;
  for (const std::string& name : ops) {
    const v1::OpInfo& base_op = *FindOp(base->ops, name);
    v1::JobSpec resolved = spec;
    resolved.set_op(name);
    absl::Status s = api::ResolveAgainstOp(base_op, backend_->device().memory_bytes(), &resolved);
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
        PluginWorkItem item;
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

PluginJobRunner::Measured PluginJobRunner::Measure(const PluginJobPlan& plan, const PluginWorkItem& item, bool as_ab,
                                                   bool head_alone) {
  const PluginSide& side = head_alone ? item.head : item.base;
  runner::RunnerRequest req;
  req.set_kind(runner::RunnerRequest::MEASURE);
  req.set_op(item.op);
  req.set_variant(side.variant);
  req.set_plugin_path(side.path);
  *req.mutable_problem() = item.problem;
  *req.mutable_settings() = plan.settings;
  if (backend_->calibration()) *req.mutable_calibration() = *backend_->calibration();
  if (as_ab) {
    req.mutable_ab()->set_head_plugin_path(item.head.path);
    req.mutable_ab()->set_head_variant(item.head.variant);
    req.mutable_ab()->set_rounds(plan.rounds);
  }
  // The watchdog: each side's own budget (the per-item timeout), both sides for an A/B pair.
  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::nanoseconds(plan.settings.timeout_ns() * (as_ab ? 2 : 1)));
  absl::StatusOr<runner::RunnerResponse> resp = backend_->CallRunner(req, limit);
  if (resp.ok() && resp->error().empty()) return {resp->result(), resp->head_result(), false};
  v1::Result failed;
  failed.set_op(item.op);
  failed.set_variant(side.variant);
  failed.set_status(!resp.ok() && absl::IsDeadlineExceeded(resp.status()) ? v1::TIMEOUT : v1::RUNTIME_ERROR);
  failed.set_status_message(resp.ok() ? resp->error() : std::string(resp.status().message()));
  return {failed, failed, true};
}

void PluginJobRunner::Run(const PluginJobPlan& plan, const JobContext& context, const CancelFlag& cancel,
                          const EventSink& sink) {
  const v1::DeviceInfo device = backend_->device();
  auto emit = [&](v1::Result r, const PluginWorkItem& item, int32_t index, const PluginSide& side, v1::AbSide ab_side) {
    r.set_op(item.op);
    r.set_variant(side.variant);
    if (!r.has_device()) *r.mutable_device() = device;
    r.set_job_id(context.job_id);
    r.set_index(index);
    *r.mutable_problem() = item.problem;
    r.set_worker_id(context.worker_id);
    r.set_finished_unix_ms(NowUnixMs());
    r.mutable_labels()->insert(plan.spec.labels().begin(), plan.spec.labels().end());
    r.set_attempt(context.attempt);
    r.set_plugin_sha256(side.sha256);
    r.set_ab_side(ab_side);
    if (item.ab) r.set_ab_pair(item.pair);
    v1::RunJobEvent event;
    *event.mutable_result() = std::move(r);
    sink(event);
  };
  for (const PluginWorkItem& item : plan.items) {
    v1::Result base, head;
    if (cancel.cancelled()) {
      base.set_status(v1::CANCELLED);
      base.set_status_message("the job was cancelled before this item ran");
      head = base;
    } else {
      v1::RunJobEvent progress;
      progress.mutable_progress()->set_results_done(item.first_index);
      progress.mutable_progress()->set_results_total(plan.results_total);
      progress.mutable_progress()->set_current(
          item.ab ? absl::StrCat(item.op, " A/B ", item.base.variant, " vs ", item.head.variant, " ",
                                 api::ProblemLabel(item.problem))
                  : absl::StrCat(item.op, " ", item.base.variant, " ", api::ProblemLabel(item.problem)));
      sink(progress);
      Measured m = Measure(plan, item, item.ab, false);
      if (item.ab && m.runner_failed) {
        // The pair died together: measure each side alone to find out which one it was.
        m.base = Measure(plan, item, false, false).base;
        m.head = Measure(plan, item, false, true).base;
      }
      base = std::move(m.base);
      head = std::move(m.head);
    }
    emit(std::move(base), item, item.first_index, item.base, item.ab ? v1::AB_BASE : v1::AB_SIDE_UNSPECIFIED);
    if (item.ab) emit(std::move(head), item, item.first_index + 1, item.head, v1::AB_HEAD);
  }
}

}  // namespace kbench::worker
