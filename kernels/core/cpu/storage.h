// Storage types of the CPU variants. They read and write a tensor in its own dtype (f32, or bf16 kept
// as its 16 bits) and compute in float; Dispatch picks the storage type from a problem's dtype.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace kbench::kernels::cpu {

// A bf16 element as stored: a distinct type so overloads cannot mix it up with an integer.
struct Bf16 {
  uint16_t bits;
};
static_assert(sizeof(Bf16) == 2);

inline float ToFloat(float v) { return v; }
inline float ToFloat(Bf16 v) { return Bf16ToFloat(v.bits); }

template <class T>
T FromFloat(float v);
template <>
inline float FromFloat<float>(float v) {
  return v;
}
template <>
inline Bf16 FromFloat<Bf16>(float v) {
  return Bf16{FloatToBf16(v)};
}

// Calls f(T{}) with T the storage type of d. Dtypes other than f32/bf16 do nothing: variants
// declare only those two, so the harness never passes another (and an output left poisoned fails).
template <class F>
void Dispatch(Dtype d, F&& f) {
  switch (d) {
    case Dtype::kF32:
      f(float{});
      break;
    case Dtype::kBF16:
      f(Bf16{});
      break;
    default:
      break;
  }
}

}  // namespace kbench::kernels::cpu
