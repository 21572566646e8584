// Inline-PTX wrappers of the GEMM ladder, one per instruction the rungs teach:
//   sm_80+   cp.async (4/16-byte global -> shared copies that bypass registers, zero-filling a copy
//            whose source is out of range), ldmatrix (a warp loads 8x8 b16 tiles straight into the
//            mma fragment layout), mma.sync.m16n8k16 bf16 -> fp32;
//   sm_90a   mbarrier (arrive / expect_tx / try_wait.parity), TMA (cp.async.bulk.tensor.2d loads
//            and stores, bulk groups, the async-proxy fence), named barriers, wgmma (fence / commit /
//            wait and its shared-memory matrix descriptors), setmaxnreg.
// The sm_90a half is compiled only where KB_GEMM_SM90A is set (the sm_90a pass of nvcc): those
// instructions do not exist on sm_80 and ptxas would reject them there.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KB_GEMM_SM90A 1
#else
#define KB_GEMM_SM90A 0
#endif

namespace kbench::kernels::gemm::ptx {

// Shared-memory address (32-bit, the state space the instructions below take).
__device__ __forceinline__ uint32_t SmemAddr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// ---- cp.async (sm_80+) -------------------------------------------------------------------------
// src_bytes = 0 copies nothing and zero-fills the destination: how a tile's out-of-range rows and
// columns become zeros that add nothing to the dot products. The source address must still be a
// valid pointer, so callers pass the tensor's base when the element is out of range.
__device__ __forceinline__ void CpAsync4(uint32_t dst, const void* src, bool in_range) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(in_range ? 4 : 0) : "memory");
}

// 16 bytes, cached in L2 only (.cg): a tile is read once per block, L1 would only be polluted.
__device__ __forceinline__ void CpAsync16(uint32_t dst, const void* src, bool in_range) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(in_range ? 16 : 0) : "memory");
}

__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// ---- shared-memory staging of results (bf16 pairs packed by cuda::PackBf16x2, core/cuda/vec.cuh) ----
__device__ __forceinline__ void StsB32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ uint4 LdsV4(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

// ---- ldmatrix + mma.sync (sm_80+) --------------------------------------------------------------
// Four 8x8 b16 matrices; lane l gives the address of row (l % 8) of matrix (l / 8), each row 16
// contiguous bytes. Register i of every lane receives its fragment of matrix i.
__device__ __forceinline__ void LdMatrixX4(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// The same, transposed: the fragment of the stored matrix's transpose. Turns rows of B[k][n]
// (n contiguous) into the k-pairs per lane that mma's "col" B operand wants.
__device__ __forceinline__ void LdMatrixX4Trans(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// d += a * b for one 16x8x16 tile: a is 16x16 row-major (4 regs of bf16x2), b 16x8 "col" (2 regs),
// d 16x8 fp32 (lane l holds rows l/4 and l/4 + 8, columns 2*(l%4) and 2*(l%4) + 1).
__device__ __forceinline__ void MmaBf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

#if KB_GEMM_SM90A
// ---- mbarrier (sm_90) --------------------------------------------------------------------------
__device__ __forceinline__ void MbarInit(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}

// Makes the initialized barriers visible to the async proxy (TMA's completions) and the cluster.
__device__ __forceinline__ void FenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// One arrival that also tells the barrier to expect `bytes` more of asynchronous (TMA) writes: the
// phase completes when every arrival came and every byte landed.
__device__ __forceinline__ void MbarArriveExpectTx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void MbarArrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Spins until the phase of parity `parity` has completed. A fresh barrier is in phase 0, so waiting
// for parity 1 ("the phase before") returns at once: how a producer's first pass finds every slot free.
__device__ __forceinline__ void MbarWait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// ---- TMA (sm_90) -------------------------------------------------------------------------------
// Copies one box of a 2D tensor (coordinates innermost first, in elements) into shared memory and
// signals `bar` with the box's bytes. Out-of-bounds parts of the box are filled with zeros and still
// counted, so the expected byte count of a stage does not depend on the problem's edges.
__device__ __forceinline__ void TmaLoad2d(uint32_t dst, const void* tensor_map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// Writes one box of shared memory to a 2D tensor (coordinates innermost first); parts of the box
// outside the tensor are not written. Asynchronous: the box is read after this returns, so its
// buffer is reused only after BulkWaitRead says the copy has read it.
__device__ __forceinline__ void TmaStore2d(const void* tensor_map, int x, int y, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<uint64_t>(tensor_map)),
               "r"(x), "r"(y), "r"(src)
               : "memory");
}
__device__ __forceinline__ void BulkCommit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Until at most kPending of this thread's bulk groups still read shared memory.
template <int kPending>
__device__ __forceinline__ void BulkWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}
// Until this thread's bulk groups are complete (their writes done, not only their reads).
__device__ __forceinline__ void BulkWaitAll() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Makes this thread's ordinary shared-memory writes visible to the async proxy (TMA) that reads them.
__device__ __forceinline__ void FenceProxyAsyncShared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// A barrier among `threads` threads (a multiple of 32) that use the same id; id 0 is __syncthreads'.
__device__ __forceinline__ void NamedBarrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// ---- setmaxnreg (sm_90a) ------------------------------------------------------------------------
// A warpgroup gives registers back to (dec) or takes them from (inc) the block's pool: the TMA
// producer needs few, the wgmma consumers hold 128 fp32 accumulators each.
template <int kRegs>
__device__ __forceinline__ void SetMaxNRegDec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void SetMaxNRegInc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// ---- wgmma (sm_90a) -----------------------------------------------------------------------------
// Orders this warpgroup's register writes (the zeroed accumulators) before the next wgmma reads them.
__device__ __forceinline__ void WgmmaFence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void WgmmaCommit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address,
// 16-29 leading-dimension byte offset (LBO), 32-45 stride-dimension byte offset (SBO), all >> 4;
// bits 49-51 base offset (0: every tile starts on a 1024-byte boundary, where the 128-byte swizzle
// pattern repeats); bits 62-63 swizzle mode, 1 = 128B.
__device__ __forceinline__ uint64_t DescEncode(uint32_t x) { return static_cast<uint64_t>((x & 0x3FFFF) >> 4); }

// K-major operand (A[m][k], k contiguous), 128B swizzle, rows of 64 bf16 = 128 bytes as TMA writes
// them: SBO = 1024 bytes between groups of 8 rows; LBO is unused for swizzled K-major layouts
// ("assumed 1"). Stepping k by 16 inside the 64-wide row adds 32 bytes to the start address: the
// hardware applies the swizzle to the final address bits, which is why the tile base must be
// 1024-byte aligned.
__device__ __forceinline__ uint64_t DescKMajorSw128(uint32_t addr) {
  return DescEncode(addr) | (uint64_t{1} << 16) | (DescEncode(1024) << 32) | (uint64_t{1} << 62);
}

// MN-major operand (B[k][n], n contiguous; wgmma with imm-trans-b = 1), 128B swizzle. The tile is
// stored as chunks of 64 columns (128 bytes, one TMA box width), each chunk all its k rows of 128
// bytes. For MN-major swizzled layouts the PTX ISA defines LBO as the offset between those 64-column
// chunks and SBO as the offset between groups of 8 k-rows (8 x 128 = 1024 bytes).
__device__ __forceinline__ uint64_t DescMnMajorSw128(uint32_t addr, uint32_t chunk_bytes) {
  return DescEncode(addr) | (DescEncode(chunk_bytes) << 16) | (DescEncode(1024) << 32) | (uint64_t{1} << 62);
}
#endif  // KB_GEMM_SM90A

}  // namespace kbench::kernels::gemm::ptx
