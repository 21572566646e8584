# triton_rmsnorm_fp8_quant: the fused rung in Triton (worker/triton/README.md). One program per row.
# A row that fits in BLOCK is loaded once and kept in registers with the weight; the sum of squares
# and max|x * w| are reduced together (rstd > 0 is one number for the row, so max|y| = rstd *
# max|x * w|), then q = x * w * (rstd * 448 / max|y|) is converted to E4M3 (round to nearest even,
# saturating) and stored; an all-zero row gets scale 0 and q 0. A longer row takes two passes over
# BLOCK-wide chunks, the second mostly from L2.
import triton
import triton.language as tl


@triton.jit
def triton_rmsnorm_fp8_quant(x, weight, q, scales, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x + row * cols
    q_row = q + row * cols
    offs = tl.arange(0, BLOCK)
    if cols <= BLOCK:
        mask = offs < cols
        v = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(weight + offs, mask=mask, other=0.0).to(tl.float32)
        xw = v * w
        rstd = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / tl.maximum(cols, 1) + 1e-6)
        m = tl.max(tl.abs(xw), axis=0) * rstd
        tl.store(scales + row, m / 448.0)
        f = tl.where(m > 0.0, rstd * (448.0 / m), 0.0)
        tl.store(q_row + offs, (xw * f).to(tl.float8e4nv), mask=mask)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        mx = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, cols, BLOCK):
            mask = start + offs < cols
            v = tl.load(x_row + start + offs, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(weight + start + offs, mask=mask, other=0.0).to(tl.float32)
            acc += v * v
            mx = tl.maximum(mx, tl.abs(v * w))
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / cols + 1e-6)
        m = tl.max(mx, axis=0) * rstd
        tl.store(scales + row, m / 448.0)
        f = tl.where(m > 0.0, rstd * (448.0 / m), 0.0)
        for start in range(0, cols, BLOCK):
            mask = start + offs < cols
            v = tl.load(x_row + start + offs, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(weight + start + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(q_row + start + offs, (v * w * f).to(tl.float8e4nv), mask=mask)


kbench_launch = {
    "kernel": "triton_rmsnorm_fp8_quant",
    "grid": ["rows"],
    "constexprs": {"BLOCK": "min(next_pow2(cols), 8192)"},
    "num_warps": 8,
    "num_stages": 1,
    "do_not_specialize": ["rows"],
}
