#include "worker/measure/host_tensors.h"

#include <cstdlib>
#include <new>

namespace kbench::worker {

void HostTensors::Free::operator()(void* p) const { std::free(p); }

HostTensors::HostTensors(const kernels::OpDef& op, const kernels::Problem& problem) {
  for (const kernels::TensorSpec& spec : op.tensors) {
    kernels::Tensor t;
    t.numel = spec.numel(problem);
    t.dtype = spec.dtype(problem);
    const int64_t bytes = std::max<int64_t>(t.numel, 0) * kernels::DtypeBytes(t.dtype);
    const size_t rounded = static_cast<size_t>((std::max<int64_t>(bytes, 1) + 63) / 64 * 64);
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr) throw std::bad_alloc();
    storage_.emplace_back(p);
    t.data = p;
    tensors_.push_back(t);
  }
}

}  // namespace kbench::worker
