// Kernel libraries in the runner child; see runner_kernels.h.
#include "worker/triton/triton_compiler.h"
#include "worker/plugin/runner_kernels.h"

#include "absl/strings/str_cat.h"
#include "api/plugin_spec.h"
#include "worker/plan/catalog.h"
#include "worker/runner/convert.h"
#include "worker/plugin/ab_measure.h"

namespace kbench::worker {
namespace {

v1::Result Failed(const runner::RunnerRequest& req, const std::string& variant, v1::ResultStatus status,
                  std::string message) {
  v1::Result r;
  r.set_op(req.op());
  r.set_variant(variant);
  *r.mutable_problem() = req.problem();
  r.set_status(status);
  r.set_status_message(std::move(message));
  return r;
}

std::string LibraryName(const std::string& path) { return path.empty() ? "this runner's kernel library" : path; }

}  // namespace

absl::StatusOr<const kernels::plugin::LoadedPlugin*> RunnerKernels::Library(const std::string& path) {
  auto it = loaded_.find(path);
  if (it != loaded_.end()) return it->second.get();
  auto lib = path.empty() ? kernels::plugin::LoadedPlugin::OpenOwn() : kernels::plugin::LoadedPlugin::Open(path);
  if (!lib.ok()) return lib.status();
  return (loaded_[path] = std::move(*lib)).get();
}

void RunnerKernels::Describe(Backend& backend, const runner::RunnerRequest& req, runner::RunnerResponse* resp) {
  *resp->mutable_device() = backend.device();
  // The worker registers this: `workers` shows whether Triton kernels can run here (worker/triton/).
  if (backend.kind() == kernels::Backend::kCuda) resp->mutable_device()->set_triton(NodeTritonCapability().Describe());
  if (auto ds = backend.datasheet()) *resp->mutable_datasheet() = *ds;
  // Without a plugin_path: the runner's own library, whose catalog the worker registers.
  auto lib = Library(req.plugin_path());
  if (!lib.ok()) {
    resp->set_error(std::string(lib.status().message()));
    return;
  }
  const Catalog catalog((*lib)->registry(), {backend.kind()});
  for (const v1::OpInfo& op : catalog.ops()) *resp->add_catalog() = op;
  resp->mutable_plugin()->set_abi_version((*lib)->abi_version());
  resp->mutable_plugin()->set_build_id((*lib)->build_id());
  resp->mutable_plugin()->set_suite_version((*lib)->suite_version());
}

void RunnerKernels::CheckProblems(const runner::RunnerRequest& req, runner::RunnerResponse* resp) {
  auto lib = Library("");
  if (!lib.ok()) {
    resp->set_error(std::string(lib.status().message()));
    return;
  }
  const kernels::OpDef* op = (*lib)->registry().Find(req.op());
  if (op == nullptr) {
    resp->set_error(absl::StrCat(LibraryName(""), " has no op '", req.op(), "'"));
    return;
  }
  for (const v1::Problem& p : req.problems())
    resp->add_problem_errors(op->validate ? op->validate(ToKernelProblem(p)) : std::string());
}

void RunnerKernels::Measure(Backend& backend, const runner::RunnerRequest& req, runner::RunnerResponse* resp) {
  if (req.has_calibration()) backend.set_calibration(req.calibration());
  const kernels::Problem problem = ToKernelProblem(req.problem());
  // Resolves one side; on failure fills `failed` instead.
  auto side = [&](const std::string& path, const std::string& variant, v1::Result* failed) -> AbSideRef {
    auto lib = Library(path);
    if (!lib.ok()) {
      *failed = Failed(req, variant, v1::RUNTIME_ERROR, std::string(lib.status().message()));
      return {};
    }
    const kernels::OpDef* op = (*lib)->registry().Find(req.op());
    const kernels::Variant* v = op ? op->find_variant(variant) : nullptr;
    if (v == nullptr) {
      *failed = Failed(req, variant, v1::RUNTIME_ERROR,
                       absl::StrCat(LibraryName(path), " has no variant '", variant, "' of op '", req.op(), "'"));
      return {};
    }
    if (op->validate) {
      if (std::string why = op->validate(problem); !why.empty()) {
        *failed = Failed(req, variant, v1::SKIPPED, absl::StrCat("the op of ", LibraryName(path), " rejects ",
                                                                 problem.label(), ": ", why));
        return {};
      }
    }
    return {op, v};
  };
  CancelFlag never;
  v1::Result base_failed;
  const AbSideRef base = side(req.plugin_path(), req.variant(), &base_failed);
  if (!req.has_ab()) {
    *resp->mutable_result() =
        base.op ? backend.MeasureOne(*base.op, *base.variant, problem, req.settings(), never) : base_failed;
    return;
  }
  v1::Result head_failed;
  const AbSideRef head = side(req.ab().head_plugin_path(), req.ab().head_variant(), &head_failed);
  if (base.op && head.op) {
    auto [b, h] = MeasureAb(backend, base, head, problem, req.settings(),
                            req.ab().rounds() > 0 ? req.ab().rounds() : api::kDefaultAbRounds, never);
    *resp->mutable_result() = std::move(b);
    *resp->mutable_head_result() = std::move(h);
    return;
  }
  // One side cannot run: measure the other alone, so that its result still says something.
  *resp->mutable_result() = base.op ? backend.MeasureOne(*base.op, *base.variant, problem, req.settings(), never) : base_failed;
  *resp->mutable_head_result() =
      head.op ? backend.MeasureOne(*head.op, *head.variant, problem, req.settings(), never) : head_failed;
}

}  // namespace kbench::worker
