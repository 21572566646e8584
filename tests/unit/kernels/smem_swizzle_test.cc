// The identities attention_flash_mma.cu's (and paged_decode_mma.cuh's) addressing rests on (kernels/attention/attention/
// smem_swizzle.h), checked on the CPU for every lane, k step and tile position: a wrong ChunkAt or a
// row step that breaks the swizzle shows here, in CI, before a GPU run would show wrong outputs.
#include "attention/attention/smem_swizzle.h"

#include <gtest/gtest.h>

#include <set>

namespace kbench::kernels::attention {
namespace {

// The ldmatrix offsets the kernel forms with ChunkAt equal each row's own swizzle (Swz).
template <int D>
void CheckLdmatrixOffsets() {
  constexpr int kRowBytes = D * 2;
  for (int lane = 0; lane < 32; ++lane) {
    const uint32_t xq = static_cast<uint32_t>((lane >> 4) ^ (lane & 7)) << 4;
    const uint32_t xk = static_cast<uint32_t>(((lane >> 3) & 1) ^ (lane & 7)) << 4;
    for (int ks = 0; ks < D / 16; ++ks) {
      for (int warp_row : {0, 32, 96}) {
        for (int mt = 0; mt < 2; ++mt) {  // Q: rows warp_row + 16 mt + lane % 16, chunk 2 ks + lane / 16
          const uint32_t q_rows = (warp_row + (lane & 15)) * kRowBytes;
          EXPECT_EQ(q_rows + mt * 16 * kRowBytes + ChunkAt(xq, ks),
                    Swz<D>(warp_row + mt * 16 + (lane & 15), ks * 2 + (lane >> 4)))
              << "Q, D " << D << ", lane " << lane << ", ks " << ks << ", mt " << mt;
        }
      }
      for (int np = 0; np < 4; ++np) {  // K: rows 16 np + lane % 8 + 8 (lane / 16), chunk 2 ks + lane / 8 % 2
        const uint32_t k_rows = ((lane & 7) + ((lane >> 4) << 3)) * kRowBytes;
        EXPECT_EQ(k_rows + np * 16 * kRowBytes + ChunkAt(xk, ks),
                  Swz<D>(np * 16 + (lane & 7) + ((lane >> 4) << 3), ks * 2 + ((lane >> 3) & 1)))
            << "K, D " << D << ", lane " << lane << ", ks " << ks << ", np " << np;
      }
      for (int kk = 0; kk < 4; ++kk) {  // V transposed: rows 16 kk + lane % 16, chunk 2 dp + lane / 16
        const uint32_t v_rows = (lane & 15) * kRowBytes;
        EXPECT_EQ(v_rows + kk * 16 * kRowBytes + ChunkAt(xq, ks), Swz<D>(kk * 16 + (lane & 15), ks * 2 + (lane >> 4)))
            << "V, D " << D << ", lane " << lane << ", dp " << ks << ", kk " << kk;
      }
    }
  }
}

TEST(SmemSwizzle, ChunkAtGivesEachRowsSwizzle) {
  CheckLdmatrixOffsets<64>();
  CheckLdmatrixOffsets<128>();
}

// TileCopy plans a thread's destination once: its rows step by a multiple of 8, so row % 8, and with
// it the swizzle, is the same in every one of its rows.
template <int D, int kThreads, int kRows>
void CheckPlannedDestinations() {
  constexpr int kChunks = D / 8, kStep = kThreads / kChunks;
  static_assert(kStep % 8 == 0);
  std::set<uint32_t> written;
  for (int t = 0; t < kThreads; ++t) {
    const int chunk = t % kChunks, row0 = t / kChunks;
    const uint32_t dst = Swz<D>(row0, chunk);
    for (int i = 0; i < kRows / kStep; ++i) {
      EXPECT_EQ(dst + i * kStep * D * 2, Swz<D>(row0 + i * kStep, chunk)) << "D " << D << ", thread " << t;
      written.insert(Swz<D>(row0 + i * kStep, chunk));
    }
  }
  // The threads' copies cover the tile's kRows x kChunks chunks once each.
  EXPECT_EQ(written.size(), static_cast<size_t>(kRows * kChunks));
}

TEST(SmemSwizzle, PlannedCopiesKeepTheirDestinationsAndCoverTheTile) {
  CheckPlannedDestinations<128, 128, 64>();   // K, V tiles at d 128
  CheckPlannedDestinations<128, 128, 128>();  // the Q tile
  CheckPlannedDestinations<64, 128, 64>();
  CheckPlannedDestinations<64, 128, 128>();
  CheckPlannedDestinations<128, 256, 64>();   // 8 warps (16 rows a warp)
}

// paged_decode_mma.cuh's warp copies: lane l copies chunk l % 16 of rows l / 16 + 2 i (i < 8) of a
// 16-row K or V group, from four planned offsets (rows r and r + 8 share a swizzle); its ldmatrix
// reads are v3's K (np 0) and V (kk 0) forms, checked above.
TEST(SmemSwizzle, PagedDecodeWarpCopiesKeepTheirDestinationsAndCoverTheGroup) {
  constexpr int kRowBytes = 256;
  std::set<uint32_t> written;
  for (int lane = 0; lane < 32; ++lane) {
    const int r0 = lane >> 4, c = lane & 15;
    uint32_t dst[4];
    for (int i = 0; i < 4; ++i) dst[i] = Swz<128>(r0 + 2 * i, c);
    for (int i = 0; i < 8; ++i) {
      const uint32_t planned = dst[i & 3] + (i >> 2) * 8 * kRowBytes;
      EXPECT_EQ(planned, Swz<128>(r0 + 2 * i, c)) << "lane " << lane << ", row " << r0 + 2 * i;
      written.insert(planned);
    }
  }
  EXPECT_EQ(written.size(), 16u * 16u);
}

// The swizzle spreads the 8 rows one ldmatrix phase reads (same chunk) over 8 distinct 16-byte bank
// groups: no bank conflict.
TEST(SmemSwizzle, EightRowsOfOneChunkHitEightBankGroups) {
  for (int chunk = 0; chunk < 16; ++chunk) {
    std::set<uint32_t> groups;
    for (int r = 0; r < 8; ++r) groups.insert((Swz<128>(r, chunk) % 128) / 16);
    EXPECT_EQ(groups.size(), 8u) << "chunk " << chunk;
  }
}

}  // namespace
}  // namespace kbench::kernels::attention
