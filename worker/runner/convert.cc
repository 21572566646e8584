#include "worker/runner/convert.h"

namespace kbench::worker {

v1::Backend ToProtoBackend(kernels::Backend b) {
  switch (b) {
    case kernels::Backend::kCpu: return v1::BACKEND_CPU;
    case kernels::Backend::kCuda: return v1::BACKEND_CUDA;
  }
  return v1::BACKEND_UNSPECIFIED;
}

kernels::Problem ToKernelProblem(const v1::Problem& p) {
  kernels::Problem out;
  for (const v1::Dim& d : p.dims()) out.dims.emplace_back(d.name(), d.value());
  out.dtype = ToKernelDtype(p.dtype());
  out.flags.assign(p.flags().begin(), p.flags().end());
  return out;
}

v1::Problem ToProtoProblem(const kernels::Problem& p) {
  v1::Problem out;
  for (const auto& [name, value] : p.dims) {
    v1::Dim* d = out.add_dims();
    d->set_name(name);
    d->set_value(value);
  }
  out.set_dtype(ToProtoDtype(p.dtype));
  for (const auto& f : p.flags) out.add_flags(f);
  return out;
}

}  // namespace kbench::worker
