// gemm on Hopper tensor cores (sm_90a): TMA -> shared memory -> wgmma, the last rung of the series'
// chapter 6. Three things change from mma.sync:
//   - wgmma.mma_async is issued by a warpgroup (4 warps) and reads both operands straight from
//     shared memory through 64-bit matrix descriptors: registers hold only the accumulators, and no
//     ldmatrix is issued at all. One m64n256k16 is 262144 FMAs.
//   - TMA (cp.async.bulk.tensor) copies a whole 2D box per instruction, computing addresses, zero-
//     filling what lies outside the tensor and writing the 128-byte swizzle that wgmma reads; one
//     thread issues all the copies, and completion is counted in bytes on an mbarrier.
//   - Warp specialization: one producer warpgroup only issues TMA copies (and gives its registers
//     back with setmaxnreg.dec), two consumer warpgroups only issue wgmma (setmaxnreg.inc for their
//     128 fp32 accumulators each). They hand shared-memory stages back and forth through "full" and
//     "empty" mbarriers, so loads, math and the epilogue overlap without __syncthreads.
//
// Rung:
//   cuda_wgmma_tma  block tile 128x256x64, 4 stages of 48 KiB (A 128x64, B 64x256, 128B swizzle),
//                   384 threads (producer + 2 consumers of 64x256 each), persistent: one block per
//                   SM walks the tiles in groups of 16 tile rows (L2 reuse), so the producer already
//                   loads the next tile while the consumers store the last one. The epilogue goes
//                   through shared memory: 64x64 boxes of C, 128B-swizzled, written out by TMA
//                   stores that run on while the next tile's mainloop starts (storing bf16 pairs
//                   straight from the accumulators took 193 against 175 us at 4096^3 on an H200).
//                   A is K-major (the usual wgmma operand); B is row-major [K][N], i.e. N-major,
//                   read with imm-trans-b = 1. Edges: TMA zero-fills rows beyond M, columns beyond N
//                   and the K tail on loads and clips the C boxes on stores; TMA needs 16-byte
//                   aligned bases and row strides, so K and N must be multiples of 8 (skip_reason
//                   says so otherwise) and offset views run the mma.sync rung.
//
// Only sm_90a machine code exists for this kernel (wgmma, setmaxnreg and the arch-specific features
// do not run on other architectures, later ones included): elsewhere the body compiles empty and
// skip_reason refuses the problem. The host builds the tensor maps with cuTensorMapEncodeTiled,
// reached through the runtime's driver entry point so the library does not link libcuda.
#include <cuda_bf16.h>
#include <cuda.h>  // CUtensorMap and its enums (types only; the function comes from the entry point)

#include <algorithm>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/occupancy.cuh"
#include "core/cuda/tensor_map.cuh"
#include "core/cuda/vec.cuh"
#include "gemm/gemm/gemm_cuda.cuh"
#include "gemm/gemm/gemm_ptx.cuh"

namespace kbench::kernels::gemm {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kBM = 128, kBN = 256, kBK = 64;
constexpr int kStages = 4;
constexpr int kConsumers = 2;                         // consumer warpgroups, 64 rows of the tile each
constexpr int kThreads = 128 * (1 + kConsumers);      // warpgroup 0 produces
constexpr int kBoxN = 64;                             // B box width: 64 bf16 = 128 bytes, the swizzle span
constexpr int kABytes = kBM * kBK * 2;                // 16 KiB: 128 rows of 128 bytes
constexpr int kBChunkBytes = kBK * kBoxN * 2;         // 8 KiB: one 64-column chunk of B, 64 rows of 128 bytes
constexpr int kBBytes = kBK * kBN * 2;                // 32 KiB: 4 chunks
constexpr int kStageBytes = kABytes + kBBytes;        // 48 KiB, a multiple of 1024
constexpr int kCBox = 64;                             // C store box: 64 x 64 bf16, 128-byte swizzled rows
constexpr int kCBoxBytes = kCBox * kCBox * 2;         // 8 KiB; two a consumer, stored in turn
constexpr int kCBytes = kConsumers * 2 * kCBoxBytes;  // 32 KiB
// Stages, C boxes, 2 x kStages mbarriers, slack to round the base up to 1024 bytes.
constexpr int kSmemBytes = kStages * kStageBytes + kCBytes + 2 * kStages * 8 + 1024;
static_assert(kSmemBytes <= 227 * 1024, "stages and C boxes must fit an SM's shared memory");

static_assert(kBK * 2 == 128, "a K-major A row must be exactly one 128-byte swizzle row");
static_assert(kABytes % 1024 == 0 && kBChunkBytes % 1024 == 0 && kStageBytes % 1024 == 0,
              "every operand tile must start on a 1024-byte boundary (the 128B swizzle period)");

#if KB_GEMM_SM90A
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128 x 40 + 256 x 232 <= 64K registers
constexpr int kGroupM = 16;                             // tile rows per raster group

// Tile (tm, tn) of linear tile `id`: groups of kGroupM tile rows, column-major inside a group, so
// the ~132 tiles in flight at once cover a compact block of C and share A rows and B columns in L2.
__device__ __forceinline__ void TileOf(int id, int tiles_m, int tiles_n, int* tm, int* tn) {
  const int per_group = kGroupM * tiles_n;
  const int first_m = (id / per_group) * kGroupM;
  const int group_m = min(tiles_m - first_m, kGroupM);
  const int in_group = id % per_group;
  *tm = first_m + in_group % group_m;
  *tn = in_group / group_m;
}

// d[128] += A(64x16, K-major, desc_a) * B(16x256, N-major, desc_b). Accumulator layout: warp w of
// the warpgroup owns rows 16w..16w+15; d[4j], d[4j+1] are row 16w + lane/4, columns 8j + 2(lane%4)
// and +1; d[4j+2], d[4j+3] the same columns 8 rows lower.
__device__ __forceinline__ void WgmmaM64N256K16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, 1, 0;\n"  // scale-d = true: D = A*B + D
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, "
      "%128, %129, p, 1, 1, 0, 1;\n"  // imm-scale-a = imm-scale-b = 1; A K-major (0), B N-major (1)
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b));
}

// Pins every accumulator register at this point of the program: an empty asm that "reads and
// writes" them, ordered with the wgmma fence/wait asms around it. Without it the compiler may move
// the zeroing of d past wgmma.fence, or the epilogue's reads of d above wgmma.wait_group, which
// reads accumulators the tensor cores are still writing.
__device__ __forceinline__ void FenceAccumulators(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
#endif  // KB_GEMM_SM90A

// Shared memory (dynamic, base rounded up to 1024 bytes): stage s holds A at s*48K and B's four
// 64-column chunks at s*48K + 16K + j*8K; consumer c's two C boxes follow the stages (c*16K, +8K);
// then kStages "full" and kStages "empty" mbarriers.
__global__ void __launch_bounds__(kThreads, 1)
    GemmWgmmaTma(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                 const __grid_constant__ CUtensorMap tma_c, int m, int n, int k) {
#if KB_GEMM_SM90A
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t base = (ptx::SmemAddr(smem_raw) + 1023u) & ~1023u;
  const uint32_t c_boxes = base + kStages * kStageBytes;
  const uint32_t full_bar = c_boxes + kCBytes;  // TMA bytes landed: the consumers may read
  const uint32_t empty_bar = full_bar + 8 * kStages;       // consumers done: the producer may overwrite
  const int tiles_m = (m + kBM - 1) / kBM, tiles_n = (n + kBN - 1) / kBN;
  const int tiles = tiles_m * tiles_n;
  const int k_tiles = (k + kBK - 1) / kBK;
  const int wg = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::MbarInit(full_bar + 8 * s, 1);                   // the producer's arrive.expect_tx
      ptx::MbarInit(empty_bar + 8 * s, kConsumers * 4);     // one arrival per consumer warp
    }
    ptx::FenceBarrierInit();
  }
  __syncthreads();  // the last block-wide barrier: from here on only mbarriers synchronize

  if (wg == 0) {
    // Producer warpgroup: one thread issues every copy; the rest of the warpgroup only returns its
    // registers to the pool the consumers draw from.
    ptx::SetMaxNRegDec<kProducerRegs>();
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int tm, tn;
        TileOf(tile, tiles_m, tiles_n, &tm, &tn);
        for (int kt = 0; kt < k_tiles; ++kt) {
          ptx::MbarWait(empty_bar + 8 * stage, phase ^ 1);  // first pass: returns at once
          const uint32_t full = full_bar + 8 * stage;
          ptx::MbarArriveExpectTx(full, kStageBytes);       // whole boxes, zero-filled parts included
          const uint32_t sa = base + stage * kStageBytes, sb = sa + kABytes;
          ptx::TmaLoad2d(sa, &tma_a, kt * kBK, tm * kBM, full);  // A box: 64 k x 128 rows
#pragma unroll
          for (int j = 0; j < kBN / kBoxN; ++j)                  // B boxes: 64 columns x 64 k each
            ptx::TmaLoad2d(sb + j * kBChunkBytes, &tma_b, tn * kBN + j * kBoxN, kt * kBK, full);
          if (++stage == kStages) stage = 0, phase ^= 1;
        }
      }
    }
  } else {
    ptx::SetMaxNRegInc<kConsumerRegs>();
    const int consumer = wg - 1;  // rows 64*consumer .. +63 of the block tile
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    float d[128];
    int stage = 0;
    uint32_t phase = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int tm, tn;
      TileOf(tile, tiles_m, tiles_n, &tm, &tn);
#pragma unroll
      for (int i = 0; i < 128; ++i) d[i] = 0.0f;
      FenceAccumulators(d);
      for (int kt = 0; kt < k_tiles; ++kt) {
        ptx::MbarWait(full_bar + 8 * stage, phase);
        __syncwarp();  // lanes may leave the polling loop apart; the .aligned wgmma ops need them together
        const uint32_t sa = base + stage * kStageBytes + consumer * (64 * 128);
        const uint32_t sb = base + stage * kStageBytes + kABytes;
        ptx::WgmmaFence();
#pragma unroll
        for (int kk = 0; kk < kBK / 16; ++kk) {
          // A: 16 more k = 32 more bytes along the swizzled 128-byte rows. B: 16 more k = 16 more
          // 128-byte rows of every 64-column chunk (chunks kBChunkBytes apart: the LBO).
          WgmmaM64N256K16(d, ptx::DescKMajorSw128(sa + kk * 32),
                          ptx::DescMnMajorSw128(sb + kk * 16 * 128, kBChunkBytes));
        }
        ptx::WgmmaCommit();
        // Waiting for this stage's wgmmas before releasing it keeps the hand-off simple; the other
        // consumer warpgroup keeps the tensor cores busy meanwhile.
        ptx::WgmmaWait<0>();
        FenceAccumulators(d);
        if (lane == 0) ptx::MbarArrive(empty_bar + 8 * stage);
        if (++stage == kStages) stage = 0, phase ^= 1;
      }
      // Epilogue through shared memory: each 64-column quarter of this consumer's 64 x 256 goes
      // into a 128-byte-swizzled box (16-byte unit u of row r at u ^ (r % 8): the 8 rows a store
      // instruction touches land on 32 different banks) and out with one TMA store that clips the
      // M and N edges. Two boxes in turn: filling one while the other is written, and the next
      // tile's mainloop starts while the last ones are still being written.
      const uint32_t boxes = c_boxes + consumer * 2 * kCBoxBytes;
      const int r0 = warp * 16 + lane / 4;  // and r0 + 8; both are lane / 4 modulo 8
#pragma unroll
      for (int q = 0; q < kBN / kCBox; ++q) {
        const uint32_t box = boxes + (q % 2) * kCBoxBytes;
        if (t == 0) ptx::BulkWaitRead<1>();  // the store of two boxes ago has read this one
        ptx::NamedBarrier(1 + consumer, 128);
#pragma unroll
        for (int u = 0; u < kCBox / 8; ++u) {
          const int j = q * (kCBox / 8) + u;  // accumulator columns 8j .. 8j + 7
          const uint32_t at = ((u ^ (lane / 4)) * 16) + 4 * (lane % 4);
          ptx::StsB32(box + r0 * 128 + at, cuda::PackBf16x2(d[4 * j], d[4 * j + 1]));
          ptx::StsB32(box + (r0 + 8) * 128 + at, cuda::PackBf16x2(d[4 * j + 2], d[4 * j + 3]));
        }
        ptx::FenceProxyAsyncShared();  // the writes above, visible to the TMA unit
        ptx::NamedBarrier(1 + consumer, 128);
        if (t == 0) {
          ptx::TmaStore2d(&tma_c, tn * kBN + q * kCBox, tm * kBM + consumer * 64, box);
          ptx::BulkCommit();
        }
      }
    }
    if (t == 0) ptx::BulkWaitAll();  // shared memory must outlive the last stores
  }
#endif  // KB_GEMM_SM90A
}

// ---- host: tensor maps --------------------------------------------------------------------------
// A 2D row-major bf16 tensor of `rows` x `cols`, boxes of box_rows x box_cols, 128B swizzle (box_cols * 2
// must be 128), zeros outside the tensor.
int EncodeBf16Map(CUtensorMap* map, const void* data, uint64_t rows, uint64_t cols, uint32_t box_rows, uint32_t box_cols) {
  return cuda::EncodeRowMajor2d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, sizeof(bf16), data, rows, cols, box_rows,
                                box_cols, CU_TENSOR_MAP_SWIZZLE_128B);
}

// What TMA needs of the tensors themselves: 16-byte aligned bases and row strides.
bool TmaOk(const GemmArgs& g) {
  return g.k % 8 == 0 && g.n % 8 == 0 && Aligned(g.a, 16) && Aligned(g.b, 16) && Aligned(g.c, 16);
}

int LaunchWgmma(const GemmArgs& g, cudaStream_t s) {
  // Offset views (the tests' unaligned trials) cannot be TMA tensors: the mma.sync rung takes them.
  if (!TmaOk(g)) return LaunchMmaSyncBf16(g, s);
  CUtensorMap map_a, map_b, map_c;
  if (const int e = EncodeBf16Map(&map_a, g.a, g.m, g.k, kBM, kBK); e != 0) return e;
  if (const int e = EncodeBf16Map(&map_b, g.b, g.k, g.n, kBK, kBoxN); e != 0) return e;
  if (const int e = EncodeBf16Map(&map_c, g.c, g.m, g.n, kCBox, kCBox); e != 0) return e;
  int sms = 0;
  KB_CUDA_TRY(cuda::SmCount(&sms));
  const int64_t tiles = cuda::CeilDiv(g.m, kBM) * cuda::CeilDiv(g.n, kBN);
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, sms));  // persistent: one block per SM
  KB_CUDA_TRY(cuda::AllowDynamicSmem(reinterpret_cast<const void*>(&GemmWgmmaTma), kSmemBytes));
  GemmWgmmaTma<<<grid, kThreads, kSmemBytes, s>>>(map_a, map_b, map_c, static_cast<int>(g.m), static_cast<int>(g.n),
                                                  static_cast<int>(g.k));
  KB_LAUNCH_CHECK();
  return 0;
}

int RunWgmma(const Problem& p, std::span<const Tensor> t, void* stream) {
  const GemmArgs g = ArgsOf(p, t);
  const cudaStream_t s = cuda::AsStream(stream);
  int rc = 0;
  if (HandleDegenerate(g, s, &rc)) return rc;
  if (p.dtype != Dtype::kBF16) return static_cast<int>(cudaErrorInvalidValue);  // skip_reason refuses it
  return LaunchWgmma(g, s);
}

std::string SkipWgmma(const Problem& p) {
  if (std::string why = DtypeSkip(p, {Dtype::kBF16}); !why.empty()) return why;
  if (std::string why = Int32DimsSkip(p); !why.empty()) return why;
  if (p.dim("K") % 8 != 0 || p.dim("N") % 8 != 0)
    return "TMA needs row strides that are multiples of 16 bytes: K and N must be multiples of 8 for bf16 (K = " +
           std::to_string(p.dim("K")) + ", N = " + std::to_string(p.dim("N")) +
           "); cuda_mma_sync handles these shapes";
  std::string why;
  const int cc = CurrentComputeCapability(&why);
  if (cc == 0) return why;
  if (cc != 90)
    return "needs an sm_90 (Hopper) device: wgmma, TMA and setmaxnreg are built only as sm_90a machine code, which "
           "runs on compute capability 9.0 alone; this device is " +
           std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  return "";
}

std::vector<LaunchInfo> LaunchesWgmma(const Problem&) {
  return {{"GemmWgmmaTma<128x256x64,4 stages,TMA store>", (const void*)&GemmWgmmaTma, kThreads, kSmemBytes}};
}

}  // namespace

void AddGemmWgmmaVariant(OpDef& op) {
  op.variants.push_back({
      .name = "cuda_wgmma_tma",
      .description = "Hopper: TMA, an mbarrier pipeline and warp-specialized wgmma.",
      .backend = Backend::kCuda,
      .dtypes = {Dtype::kBF16},
      .min_compute_capability = 90,
      .skip_reason = SkipWgmma,
      .run_cuda = RunWgmma,
      .launches = LaunchesWgmma,
  });
}

}  // namespace kbench::kernels::gemm
