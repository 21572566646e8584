# triton_layernorm: the layernorm rung in Triton (worker/triton/README.md). One program per row. A
# row that fits in BLOCK is loaded once and kept in registers: the mean, then the population variance
# of (x - mean) (two reductions over registers, so inputs far from zero lose nothing to cancellation),
# then the scaled and shifted store. A longer row takes three passes over BLOCK-wide chunks.
# Statistics in float, eps = 1e-5 as the op.
import triton
import triton.language as tl


@triton.jit
def triton_layernorm(x, gamma, beta, out, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x + row * cols
    out_row = out + row * cols
    offs = tl.arange(0, BLOCK)
    if cols <= BLOCK:
        mask = offs < cols
        v = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(v, axis=0) / cols
        d = tl.where(mask, v - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / cols + 1e-5)
        g = tl.load(gamma + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(beta + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + offs, (d * rstd * g + b).to(out.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, cols, BLOCK):
            acc += tl.load(x_row + start + offs, mask=start + offs < cols, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / cols
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, cols, BLOCK):
            mask = start + offs < cols
            v = tl.load(x_row + start + offs, mask=mask, other=0.0).to(tl.float32)
            d = tl.where(mask, v - mean, 0.0)
            acc += d * d
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / cols + 1e-5)
        for start in range(0, cols, BLOCK):
            mask = start + offs < cols
            v = tl.load(x_row + start + offs, mask=mask, other=0.0).to(tl.float32)
            g = tl.load(gamma + start + offs, mask=mask, other=0.0).to(tl.float32)
            b = tl.load(beta + start + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(out_row + start + offs, ((v - mean) * rstd * g + b).to(out.dtype.element_ty), mask=mask)


kbench_launch = {
    "kernel": "triton_layernorm",
    "grid": ["rows"],
    "constexprs": {"BLOCK": "min(next_pow2(cols), 8192)"},
    "num_warps": 8,
    "num_stages": 1,
}
