// The CPU variant of testing/skip_after_n.h: a copy for its first kSkipAfterCalls calls, then nothing.
#include "testing/skip_after_n.h"

#include <atomic>
#include <cstring>
#include <memory>

namespace kbench::kernels {

void AddSkipAfterNVariants(OpDef& op) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  Variant v;
  v.name = "cpu_quits_after_n";
  v.description = "Test-only: copies for its first 3 calls in the process, then writes nothing";
  v.backend = Backend::kCpu;
  v.dtypes = {Dtype::kF32};
  v.run_cpu = [calls](const Problem&, std::span<const Tensor> t) {
    if (calls->fetch_add(1) < kSkipAfterCalls) std::memcpy(t[1].data, t[0].data, t[0].numel * sizeof(float));
  };
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
