# triton_gemm: the bf16 GEMM rung in Triton (worker/triton/README.md). C[M,N] = A[M,K] * B[K,N], all
# row-major, tl.dot on the tensor cores (wgmma on Hopper) with a float accumulator and software
# pipelining over K (num_stages). Programs walk the tiles of C in groups of GROUP_M rows of tiles so
# that consecutive programs share tiles of A and B in L2. The configs below are autotuned: each is
# compiled once per shape class (the dtype and which dims are multiples of 16) and timed once on the
# first problem of that class; the result names the chosen one.
import triton
import triton.language as tl


@triton.jit
def triton_gemm(A, B, C, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows

    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = A + rm[:, None] * K + rk[None, :]
    b_ptrs = B + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c_ptrs = C + rm[:, None] * N + rn[None, :]
    tl.store(c_ptrs, acc.to(C.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


kbench_launch = {
    "kernel": "triton_gemm",
    "grid": ["cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"],
    "constexprs": {"GROUP_M": 8},
    "dtypes": ["bf16"],
    "configs": [
        {"constexprs": {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, "num_warps": 8, "num_stages": 3},
        {"constexprs": {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, "num_warps": 8, "num_stages": 4},
        {"constexprs": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, "num_warps": 8, "num_stages": 4},
        {"constexprs": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, "num_warps": 4, "num_stages": 4},
        {"constexprs": {"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 64}, "num_warps": 4, "num_stages": 4},
        {"constexprs": {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64}, "num_warps": 4, "num_stages": 4},
        {"constexprs": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, "num_warps": 4, "num_stages": 3},
    ],
}
