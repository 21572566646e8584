// Element types of the suite and their host-side conversions (round to nearest even).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace kbench::kernels {

// Same numbering as kbench.v1.Dtype, so the worker converts with a cast.
// kI32 and kU8 are for tensors that hold indices or packed bits (block tables, int4 weights), never a
// problem's dtype.
enum class Dtype : int { kUnspecified = 0, kF32 = 1, kBF16 = 2, kF16 = 3, kTF32 = 4, kFP8E4M3 = 5, kI32 = 6, kU8 = 7 };

enum class Backend : int { kCpu = 1, kCuda = 2 };

int64_t DtypeBytes(Dtype d);
std::string DtypeName(Dtype d);

inline float Bf16ToFloat(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// Rounds a float to the nearest bf16 value, kept as float.
inline float RoundBf16(float f) { return Bf16ToFloat(FloatToBf16(f)); }

float HalfToFloat(uint16_t h);
// OCP FP8 E4M3: bias 7, no infinities, 0x7f/0xff are NaN, largest finite 448. The conversion rounds
// to nearest even and saturates to +-448 (what quantization kernels do with cvt.rn.satfinite).
float Fp8E4M3ToFloat(uint8_t v);
uint8_t FloatToFp8E4M3(float f);
uint16_t FloatToHalf(float f);

// Reads element i of a buffer of dtype d as double (bf16/f16 widened exactly).
double LoadAsDouble(const void* data, Dtype d, int64_t i);
// Writes v, rounded to dtype d, into element i.
void StoreFromDouble(void* data, Dtype d, int64_t i, double v);

}  // namespace kbench::kernels
