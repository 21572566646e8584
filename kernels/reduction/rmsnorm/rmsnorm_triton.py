# triton_rmsnorm: the rmsnorm rung in Triton (worker/triton/README.md). One program per row. A row
# that fits in BLOCK is loaded once, kept in registers, reduced and scaled (one read of x, one write
# of out: the memory-bound ideal); a longer row takes two passes over BLOCK-wide chunks (sum of
# squares, then scale), the second pass mostly from L2. Statistics in float, eps = 1e-6 as the op.
import triton
import triton.language as tl


@triton.jit
def triton_rmsnorm(x, weight, out, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x + row * cols
    out_row = out + row * cols
    offs = tl.arange(0, BLOCK)
    if cols <= BLOCK:
        mask = offs < cols
        v = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / cols + 1e-6)
        w = tl.load(weight + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + offs, (v * rstd * w).to(out.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, cols, BLOCK):
            mask = start + offs < cols
            v = tl.load(x_row + start + offs, mask=mask, other=0.0).to(tl.float32)
            acc += v * v
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / cols + 1e-6)
        for start in range(0, cols, BLOCK):
            mask = start + offs < cols
            v = tl.load(x_row + start + offs, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(weight + start + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(out_row + start + offs, (v * rstd * w).to(out.dtype.element_ty), mask=mask)


kbench_launch = {
    "kernel": "triton_rmsnorm",
    "grid": ["rows"],
    "constexprs": {"BLOCK": "min(next_pow2(cols), 8192)"},
    "num_warps": 8,
    "num_stages": 1,
}
