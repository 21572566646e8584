#include "core/dtype.h"

#include <cmath>

namespace kbench::kernels {

int64_t DtypeBytes(Dtype d) {
  switch (d) {
    case Dtype::kF32:
    case Dtype::kTF32: return 4;
    case Dtype::kBF16:
    case Dtype::kF16: return 2;
    case Dtype::kFP8E4M3:
    case Dtype::kU8: return 1;
    case Dtype::kI32: return 4;
    default: return 0;
  }
}

std::string DtypeName(Dtype d) {
  switch (d) {
    case Dtype::kF32: return "f32";
    case Dtype::kBF16: return "bf16";
    case Dtype::kF16: return "f16";
    case Dtype::kTF32: return "tf32";
    case Dtype::kFP8E4M3: return "fp8_e4m3";
    case Dtype::kI32: return "i32";
    case Dtype::kU8: return "u8";
    default: return "unspecified";
  }
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

uint16_t FloatToHalf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000;
  const float a = std::fabs(f);
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00);
  if (a < 6.103515625e-05f) {  // subnormal: multiples of 2^-24, rint rounds to nearest even
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  int e;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  uint32_t mant = static_cast<uint32_t>(std::nearbyint(m * 2048.0f));  // 11 bits incl. implicit
  if (mant == 2048) { mant = 1024; ++e; }
  const uint32_t exp = static_cast<uint32_t>(e - 1 + 15);
  return static_cast<uint16_t>(sign | (exp << 10) | (mant & 0x3ff));
}

float Fp8E4M3ToFloat(uint8_t v) {
  const uint32_t sign = v >> 7, exp = (v >> 3) & 0xf, mant = v & 0x7;
  if (exp == 0xf && mant == 0x7) return NAN;
  const float a = exp == 0 ? std::ldexp(static_cast<float>(mant), -9)  // subnormal: mant * 2^-6 / 8
                           : std::ldexp(static_cast<float>(mant | 0x8), static_cast<int>(exp) - 10);
  return sign ? -a : a;
}

uint8_t FloatToFp8E4M3(float f) {
  if (std::isnan(f)) return 0x7f;
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const float a = std::fabs(f);
  if (a >= 448.0f) return sign | 0x7e;  // saturate
  if (a < 0.015625f) {  // below 2^-6: subnormal steps of 2^-9, rint rounds to nearest even
    return sign | static_cast<uint8_t>(std::nearbyint(a * 512.0f));  // 8 (=2^-6) is the smallest normal: encodes right
  }
  int e;
  const float m = std::frexp(a, &e);                                  // a = m * 2^e, m in [0.5, 1)
  uint32_t mant = static_cast<uint32_t>(std::nearbyint(m * 16.0f));  // 4 bits incl. implicit
  if (mant == 16) { mant = 8; ++e; }
  const uint32_t exp = static_cast<uint32_t>(e - 1 + 7);
  if (exp > 15 || (exp == 15 && (mant & 7) == 7)) return sign | 0x7e;
  return static_cast<uint8_t>(sign | (exp << 3) | (mant & 0x7));
}

double LoadAsDouble(const void* data, Dtype d, int64_t i) {
  switch (d) {
    case Dtype::kF32:
    case Dtype::kTF32: return static_cast<const float*>(data)[i];
    case Dtype::kBF16: return Bf16ToFloat(static_cast<const uint16_t*>(data)[i]);
    case Dtype::kF16: return HalfToFloat(static_cast<const uint16_t*>(data)[i]);
    case Dtype::kFP8E4M3: return Fp8E4M3ToFloat(static_cast<const uint8_t*>(data)[i]);
    case Dtype::kI32: return static_cast<const int32_t*>(data)[i];
    case Dtype::kU8: return static_cast<const uint8_t*>(data)[i];
    default: return NAN;
  }
}

void StoreFromDouble(void* data, Dtype d, int64_t i, double v) {
  switch (d) {
    case Dtype::kF32:
    case Dtype::kTF32: static_cast<float*>(data)[i] = static_cast<float>(v); break;
    case Dtype::kBF16: static_cast<uint16_t*>(data)[i] = FloatToBf16(static_cast<float>(v)); break;
    case Dtype::kF16: static_cast<uint16_t*>(data)[i] = FloatToHalf(static_cast<float>(v)); break;
    case Dtype::kFP8E4M3: static_cast<uint8_t*>(data)[i] = FloatToFp8E4M3(static_cast<float>(v)); break;
    // Integers: NaN (a poisoned output) becomes a recognisable pattern rather than undefined behaviour.
    case Dtype::kI32: static_cast<int32_t*>(data)[i] = std::isnan(v) ? INT32_MIN : static_cast<int32_t>(v); break;
    case Dtype::kU8: static_cast<uint8_t*>(data)[i] = std::isnan(v) ? 0xff : static_cast<uint8_t>(v); break;
    default: break;
  }
}

}  // namespace kbench::kernels
