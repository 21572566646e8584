# triton_vector_add: the vector_add rung in Triton (worker/triton/README.md). One program per BLOCK
# elements, loads and stores masked at the tail, the sum computed in float and stored in the dtype.
# The harness's pointers are 16-byte aligned and N is specialized when divisible by 16, so Triton
# emits 16-byte vector accesses; 64-bit offsets keep N = 2^31 and beyond correct.
import triton
import triton.language as tl


@triton.jit
def triton_vector_add(x, y, out, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    a = tl.load(x + offs, mask=mask).to(tl.float32)
    b = tl.load(y + offs, mask=mask).to(tl.float32)
    tl.store(out + offs, (a + b).to(out.dtype.element_ty), mask=mask)


kbench_launch = {
    "kernel": "triton_vector_add",
    "grid": ["cdiv(N, BLOCK)"],
    "constexprs": {"BLOCK": 4096},
    "num_warps": 8,
    "num_stages": 1,
}
