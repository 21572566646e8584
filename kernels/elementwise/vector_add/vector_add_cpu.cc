// CPU variants of vector_add.
//   cpu_naive     one thread, one loop: the compiler vectorizes it, and a single core still cannot
//                 pull the memory bandwidth of the socket.
//   cpu_parallel  the same loop split into one contiguous chunk per hardware thread: the bandwidth
//                 a memory-bound op gets from more cores, and what thread start-up costs on small N.
#include "core/cpu/parallel.h"
#include "core/cpu/storage.h"
#include "core/cpu/variant.h"
#include "elementwise/vector_add/vector_add.h"

namespace kbench::kernels {
namespace {

template <class T>
void AddRange(const T* __restrict x, const T* __restrict y, T* __restrict out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = cpu::FromFloat<T>(cpu::ToFloat(x[i]) + cpu::ToFloat(y[i]));
}

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    AddRange(static_cast<const T*>(t[0].data), static_cast<const T*>(t[1].data), static_cast<T*>(t[2].data), 0,
             p.dim("N"));
  });
}

void RunParallel(const Problem& p, std::span<const Tensor> t) {
  cpu::Dispatch(p.dtype, [&]<class T>(T) {
    const auto* x = static_cast<const T*>(t[0].data);
    const auto* y = static_cast<const T*>(t[1].data);
    auto* out = static_cast<T*>(t[2].data);
    // 64K elements per thread at least: below that the threads cost more than they bring.
    cpu::ParallelFor(p.dim("N"), int64_t{1} << 16, [&](int64_t b, int64_t e) { AddRange(x, y, out, b, e); });
  });
}

}  // namespace

void AddVectorAddCpuVariants(OpDef& op) {
  op.variants.push_back(cpu::MakeCpuVariant(
      op, "cpu_naive", "One thread, one loop.", RunNaive));
  op.variants.push_back(cpu::MakeCpuVariant(
      op, "cpu_parallel", "The loop split over every hardware thread.",
      RunParallel));
}

}  // namespace kbench::kernels
