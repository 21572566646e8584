// The w4a16 weight format on the host (see w4a16_gemm.h): packing, the seeded generator the fills
// share, and the dequantization the reference uses.
#include <cstring>

#include "core/dtype.h"
#include "core/random.h"
#include "quant/w4a16_gemm/w4a16_gemm.h"

namespace kbench::kernels {
namespace {

// Independent streams for codes, scales and zeros.
uint64_t Draw(uint64_t seed, uint64_t stream, uint64_t i) {
  return SplitMix64(SplitMix64(seed * 0x100000001b3ull ^ SplitMix64(stream)) + i);
}

}  // namespace

uint32_t PackW4Word(const uint8_t (&q)[8]) {
  uint32_t w = 0;
  for (int j = 0; j < kW4PerWord; ++j) w |= static_cast<uint32_t>(q[j] & 0xfu) << (4 * W4Nibble(j));
  return w;
}

uint8_t W4CodeAt(uint64_t seed, int64_t n, int64_t k, int64_t K) {
  return static_cast<uint8_t>(Draw(seed, 0x5134, static_cast<uint64_t>(n * K + k)) >> 60);
}

float W4ScaleAt(uint64_t seed, int64_t n, int64_t g) {
  const uint64_t m = 8 + (Draw(seed, 0x5ca1e, static_cast<uint64_t>(n) << 24 ^ static_cast<uint64_t>(g)) >> 62);
  return static_cast<float>(m) * 0x1p-7f;  // 4 significant bits: 0.0625 .. 0.0859
}

float W4ZeroAt(uint64_t seed, int64_t n, int64_t g) {
  // Zero points 4..11: the weights (q - z) * s stay within about [-0.95, 0.95].
  return static_cast<float>(4 + (Draw(seed, 0x2e40, static_cast<uint64_t>(n) << 24 ^ static_cast<uint64_t>(g)) >> 61));
}

double W4Dequant(const uint32_t* w, const uint16_t* scales, const uint16_t* zeros, int64_t K, int64_t n, int64_t k) {
  const int64_t words = W4Words(K), groups = W4Groups(K);
  const uint8_t q = W4Code(w[n * words + k / kW4PerWord], static_cast<int>(k % kW4PerWord));
  const int64_t g = n * groups + k / kW4Group;
  return (static_cast<double>(q) - Bf16ToFloat(zeros[g])) * static_cast<double>(Bf16ToFloat(scales[g]));
}

}  // namespace kbench::kernels
