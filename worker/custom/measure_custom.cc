#include "worker/custom/measure_custom.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/custom_spec.h"
#include "api/sha256.h"
#include "worker/runner/convert.h"
#include "worker/custom/contract.h"

namespace kbench::worker {
namespace {

// Modules kept loaded per runner; past this the oldest-keyed ones go (a job has at most 8 customs).
constexpr size_t kMaxLoadedModules = 32;

}  // namespace

v1::Result CustomKernelRunner::Measure(Backend& backend, const kernels::OpDef& op, const v1::CustomVariant& custom,
                                       const kernels::Problem& problem, const v1::MeasurementSettings& settings) {
  const std::string name = api::CustomVariantName(custom);
  v1::Result r;
  r.set_op(op.name);
  r.set_variant(name);
  *r.mutable_problem() = ToProtoProblem(problem);
  *r.mutable_device() = backend.device();
  v1::CustomKernelInfo* info = r.mutable_custom();
  info->set_kind(custom.kind() == v1::CUSTOM_SOURCE_KIND_UNSPECIFIED ? v1::CUDA_SOURCE : custom.kind());
  auto fail = [&](v1::ResultStatus status, std::string message) {
    r.set_status(status);
    r.set_status_message(std::move(message));
    return r;
  };
  const v1::Dtype dtype = ToProtoDtype(problem.dtype);
  if (!custom.dtypes().empty() && std::find(custom.dtypes().begin(), custom.dtypes().end(), dtype) == custom.dtypes().end())
    return fail(v1::SKIPPED, absl::StrCat(name, " does not implement ", kernels::DtypeName(problem.dtype)));
  const std::optional<v1::LaunchContract> contract = MakeLaunchContract(op);
  if (!contract) return fail(v1::RUNTIME_ERROR, absl::StrCat("op '", op.name, "' takes no custom kernels"));

  absl::StatusOr<LaunchConfig> launch = ResolveLaunch(custom, *contract, problem);
  if (!launch.ok()) return fail(v1::RUNTIME_ERROR, absl::StrCat("launch: ", launch.status().message()));
  for (uint32_t b : launch->block) info->add_block(b);
  for (int64_t g : launch->grid) info->add_grid(g);
  info->set_dynamic_shared_bytes(launch->dynamic_shared_bytes);

  const v1::DeviceInfo device = backend.device();
  BuildOptions build{.compute_capability = device.compute_capability_major() * 10 + device.compute_capability_minor(),
                     .dtype = problem.dtype,
                     .cache = &cache_,
                     .cuda_include_dir = cuda_include_dir_};
  absl::StatusOr<KernelImage> image = BuildKernelImage(custom, *contract, build);
  if (!image.ok())
    return fail(image.status().code() == absl::StatusCode::kInternal ? v1::RUNTIME_ERROR : v1::COMPILE_ERROR,
                std::string(image.status().message()));
  info->set_source_sha256(image->source_sha256);
  info->set_entry(image->entry);
  info->set_arch(image->arch);
  info->set_compiler(image->compiler);
  info->set_cache_hit(image->cache_hit);
  info->set_compile_ns(image->compile_ns);
  info->set_compile_log(image->compile_log);

  api::Sha256 h;
  h.Update(image->bytes);
  const std::string key = absl::StrCat(h.HexDigest(), "/", image->entry);
  auto it = loaded_.find(key);
  if (it == loaded_.end()) {
    absl::StatusOr<std::unique_ptr<LoadedKernel>> kernel = LoadedKernel::Load(*image, *contract);
    if (!kernel.ok())
      return fail(absl::IsUnavailable(kernel.status()) ? v1::RUNTIME_ERROR : v1::COMPILE_ERROR,
                  std::string(kernel.status().message()));
    if (loaded_.size() >= kMaxLoadedModules) loaded_.erase(loaded_.begin());
    it = loaded_.emplace(key, std::move(*kernel)).first;
  }
  const LoadedKernel& kernel = *it->second;
  if (absl::Status s = kernel.AllowDynamicShared(launch->dynamic_shared_bytes); !s.ok())
    return fail(v1::RUNTIME_ERROR, absl::StrCat("launch: ", s.message()));

  const kernels::Variant variant = MakeCustomVariant(name, kernel, *launch, problem.dtype);
  CancelFlag never;
  v1::Result measured = backend.MeasureOne(op, variant, problem, settings, never);
  *measured.mutable_custom() = *info;
  const int threads = static_cast<int>(launch->block[0] * launch->block[1] * launch->block[2]);
  *measured.add_resources() = kernel.Resources(threads, launch->dynamic_shared_bytes);
  if (backend.context_lost()) loaded_.clear();  // the modules died with the context; the runner exits
  return measured;
}

}  // namespace kbench::worker
