// CPU variant of rope.
//   cpu_naive  one thread; cos and sin computed per (token, pair) from rope_math.h's angle (not
//              read from the cache), in float, so it checks that definition against the cache the
//              reference uses.
#include <cmath>

#include "core/cpu/storage.h"
#include "core/cpu/variant.h"
#include "elementwise/rope/rope.h"
#include "elementwise/rope/rope_math.h"

namespace kbench::kernels {
namespace {

void RunNaive(const Problem& p, std::span<const Tensor> t) {
  const int64_t tokens = p.dim("tokens"), d = p.dim("head_dim"), half = d / 2;
  const bool gptj = p.has_flag("gptj");
  const auto* positions = static_cast<const int32_t*>(t[2].data);
  for (int which = 0; which < 2; ++which) {
    const auto* x = static_cast<const cpu::Bf16*>(t[which].data);
    auto* out = static_cast<cpu::Bf16*>(t[4 + which].data);
    const int64_t heads = p.dim(which == 0 ? "q_heads" : "kv_heads");
    for (int64_t tok = 0; tok < tokens; ++tok) {
      for (int64_t i = 0; i < half; ++i) {
        const float a = rope::Angle(positions[tok], rope::InvFreq(static_cast<int>(i), static_cast<int>(d)));
        const float c = static_cast<float>(std::cos(static_cast<double>(a)));
        const float s = static_cast<float>(std::sin(static_cast<double>(a)));
        for (int64_t h = 0; h < heads; ++h) {
          const int64_t base = (tok * heads + h) * d;
          const int64_t ia = gptj ? 2 * i : i, ib = gptj ? 2 * i + 1 : i + half;
          const float xa = cpu::ToFloat(x[base + ia]), xb = cpu::ToFloat(x[base + ib]);
          out[base + ia] = cpu::FromFloat<cpu::Bf16>(xa * c - xb * s);
          out[base + ib] = cpu::FromFloat<cpu::Bf16>(xb * c + xa * s);
        }
      }
    }
  }
}

}  // namespace

void AddRopeCpuVariants(OpDef& op) {
  Variant v = cpu::MakeCpuVariant(op, "cpu_naive", "One thread, cos and sin computed per token and pair.", RunNaive);
  v.dtypes = {Dtype::kBF16};
  op.variants.push_back(std::move(v));
}

}  // namespace kbench::kernels
