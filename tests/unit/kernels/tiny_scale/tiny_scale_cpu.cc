// CPU rung of tiny_scale.
//   cpu_naive  one thread, one loop.
#include "core/cpu/storage.h"
#include "core/cpu/variant.h"
#include "tiny_scale/tiny_scale.h"

namespace kbench::kernels {
namespace {

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    auto* out = static_cast<T*>(t[1].data);
    for (int64_t i = 0; i < p.dim("N"); ++i) out[i] = cpu::FromFloat<T>(2 * cpu::ToFloat(x[i]));
  });
}

}  // namespace

void AddTinyScaleCpuVariants(OpDef& op) {
  op.variants.push_back(cpu::MakeCpuVariant(op, "cpu_naive", "One thread, one loop.", RunNaive));
}

}  // namespace kbench::kernels
