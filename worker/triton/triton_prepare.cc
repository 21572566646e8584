// The GPU-free half of a Triton measurement; see triton_prepare.h.
#include "worker/triton/triton_prepare.h"

#include <algorithm>
#include <future>

#include "absl/strings/str_cat.h"

namespace kbench::worker {
namespace {

std::string TritonType(kernels::Dtype d) {
  switch (d) {
    case kernels::Dtype::kF32: return "fp32";
    case kernels::Dtype::kBF16: return "bf16";
    case kernels::Dtype::kF16: return "fp16";
    case kernels::Dtype::kI32: return "i32";
    case kernels::Dtype::kU8: return "u8";
    case kernels::Dtype::kFP8E4M3: return "fp8e4nv";
    default: return "";
  }
}

}  // namespace

// The launch contract's parameters (worker/custom/contract.h), derived from the op the same way,
// for every op: a CUDA custom kernel needs the op's launch rule (default block, grid, template), a
// Triton kernel only these and its own description, so ops without a rule (attention) take Triton.
std::vector<TritonParam> TritonParamsFor(const kernels::OpDef& op, const kernels::Problem& problem,
                                         const std::vector<std::string>& do_not_specialize) {
  std::vector<TritonParam> params;
  for (const kernels::TensorSpec& t : op.tensors)
    params.push_back({.name = t.name, .type = "*" + TritonType(t.dtype(problem)), .div16 = true});
  for (const std::string& d : op.dims) {
    const bool hint = std::find(do_not_specialize.begin(), do_not_specialize.end(), d) == do_not_specialize.end();
    params.push_back({.name = d, .type = "i64", .div16 = hint && problem.dim(d) % 16 == 0});
  }
  return params;
}

TritonPrepared PrepareTriton(const kernels::OpDef& op, const TritonKernelSource& kernel, const kernels::Problem& problem,
                             const TritonPrepareOptions& options) {
  TritonPrepared out;
  auto fail = [&](v1::ResultStatus status, std::string message) {
    out.status = status;
    out.message = std::move(message);
    out.configs.clear();
    return out;
  };
  const TritonCapability& capability = options.capability ? *options.capability : NodeTritonCapability();
  if (!capability.available)
    return fail(v1::SKIPPED, absl::StrCat("Triton is not available on this node (", capability.reason, ")"));
  out.compiler = absl::StrCat("triton ", capability.triton_version);
  absl::StatusOr<TritonLaunch> launch = ParseTritonLaunch(kernel.source, kernel.file_name);
  if (!launch.ok()) return fail(v1::COMPILE_ERROR, std::string(launch.status().message()));
  const std::vector<TritonParam> params = TritonParamsFor(op, problem, launch->do_not_specialize);
  if (params.empty()) return fail(v1::RUNTIME_ERROR, absl::StrCat("op '", op.name, "' has no tensors for a Triton kernel"));
  if (!launch->dtypes.empty() &&
      std::find(launch->dtypes.begin(), launch->dtypes.end(), problem.dtype) == launch->dtypes.end())
    return fail(v1::SKIPPED, absl::StrCat(kernel.variant_name, " does not implement ", kernels::DtypeName(problem.dtype)));
  std::vector<std::pair<std::string, std::string>> named;  // (key, dim) the description names
  for (const auto& [dim, values] : launch->dim_values) named.emplace_back("dims", dim);
  for (const std::string& dim : launch->do_not_specialize) named.emplace_back("do_not_specialize", dim);
  for (const auto& [key, dim] : named)
    if (std::find(op.dims.begin(), op.dims.end(), dim) == op.dims.end())
      return fail(v1::COMPILE_ERROR, absl::StrCat(kernel.file_name, ": ", kTritonLaunchName, ": ", key, ": op '",
                                                  op.name, "' has no dim '", dim.substr(0, 32), "'"));
  if (std::string dims = UnimplementedDims(*launch, problem); !dims.empty())
    return fail(v1::SKIPPED, absl::StrCat(kernel.variant_name, " does not implement ", dims));
  // The configs compile side by side (each in its own child; an autotuned GEMM has several), all
  // within the one compile limit the worker's watchdog allows.
  std::vector<ResolvedTritonLaunch> resolved;
  for (const TritonConfig& config : launch->configs) {
    absl::StatusOr<ResolvedTritonLaunch> r = ResolveTritonLaunch(*launch, config, problem, op.flags);
    if (!r.ok()) return fail(v1::RUNTIME_ERROR, absl::StrCat("launch: ", r.status().message()));
    resolved.push_back(std::move(*r));
  }
  std::vector<std::future<absl::StatusOr<TritonKernelImage>>> compiles;
  for (const ResolvedTritonLaunch& r : resolved) {
    TritonCompileRequest request{.source = kernel.source,
                                 .file_name = kernel.file_name,
                                 .kernel = launch->kernel.empty() ? "kbench_" + op.name : launch->kernel,
                                 .params = params,
                                 .constexprs = r.constexprs,
                                 .num_warps = r.num_warps,
                                 .num_stages = r.num_stages,
                                 .arch = options.compute_capability};
    compiles.push_back(std::async(std::launch::async, [request = std::move(request), &capability, &options] {
      return CompileTriton(request, capability, options.cache, options.compile_limit);
    }));
  }
  std::vector<absl::StatusOr<TritonKernelImage>> images;
  for (auto& c : compiles) images.push_back(c.get());  // every child ends before any result is used
  for (size_t i = 0; i < images.size(); ++i) {
    absl::StatusOr<TritonKernelImage>& image = images[i];
    if (!image.ok()) {
      const bool job_error = absl::IsInvalidArgument(image.status()) || absl::IsDeadlineExceeded(image.status());
      return fail(job_error ? v1::COMPILE_ERROR : absl::IsUnavailable(image.status()) ? v1::SKIPPED : v1::RUNTIME_ERROR,
                  std::string(image.status().message()));
    }
    out.cache_hit = out.cache_hit && image->cache_hit;
    out.compile_ns = std::max(out.compile_ns, image->compile_ns);
    out.configs.push_back(
        {.launch = resolved[i], .label = launch->configs[i].Label(resolved[i].constexprs), .image = std::move(*image)});
  }
  return out;
}

}  // namespace kbench::worker
