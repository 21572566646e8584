// The rotary angles, shared by the cache fill (host), the CPU rung and the computed-angle CUDA rung,
// so that a computed cos/sin is the cached one to within the sine's own rounding: the frequency of
// pair i is inv_freq_i = theta^(-2i/d) rounded to float (theta = 500000, Llama 3), and the angle of
// position p is float(p) * inv_freq_i rounded to float, as a float32 cache is built. (In exact
// arithmetic an angle near 8192 rad in float is ~5e-4 rad off; the definition includes that rounding
// rather than letting it decide which rung passes.)
#pragma once

#include <cmath>

#ifdef __CUDACC__
#define KB_ROPE_HD __host__ __device__
#else
#define KB_ROPE_HD
#endif

namespace kbench::kernels::rope {

inline constexpr double kLog2Theta = 18.931568569324174;  // log2(500000)

KB_ROPE_HD inline float InvFreq(int i, int head_dim) {
  return static_cast<float>(exp2(-2.0 * static_cast<double>(i) / static_cast<double>(head_dim) * kLog2Theta));
}

KB_ROPE_HD inline float Angle(int pos, float inv_freq) { return static_cast<float>(pos) * inv_freq; }

}  // namespace kbench::kernels::rope
