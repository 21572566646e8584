# triton_softmax: the softmax rung in Triton (worker/triton/README.md). One program per row. A row
# that fits in BLOCK is loaded once and kept in registers: max, exp, sum and the scaled store with
# one read of x and one write of out. A longer row takes three passes over BLOCK-wide chunks (max,
# sum of exp, store), the later ones mostly from L2. All arithmetic in float.
import triton
import triton.language as tl


@triton.jit
def triton_softmax(x, out, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x + row * cols
    out_row = out + row * cols
    offs = tl.arange(0, BLOCK)
    if cols <= BLOCK:
        mask = offs < cols
        v = tl.load(x_row + offs, mask=mask, other=-float("inf")).to(tl.float32)
        e = tl.exp(v - tl.max(v, axis=0))
        tl.store(out_row + offs, (e / tl.sum(e, axis=0)).to(out.dtype.element_ty), mask=mask)
    else:
        mx = tl.full([BLOCK], -float("inf"), tl.float32)
        for start in range(0, cols, BLOCK):
            v = tl.load(x_row + start + offs, mask=start + offs < cols, other=-float("inf")).to(tl.float32)
            mx = tl.maximum(mx, v)
        m = tl.max(mx, axis=0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, cols, BLOCK):
            mask = start + offs < cols
            v = tl.load(x_row + start + offs, mask=mask, other=0.0).to(tl.float32)
            acc += tl.where(mask, tl.exp(v - m), 0.0)
        inv = 1.0 / tl.sum(acc, axis=0)
        for start in range(0, cols, BLOCK):
            mask = start + offs < cols
            v = tl.load(x_row + start + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(out_row + start + offs, (tl.exp(v - m) * inv).to(out.dtype.element_ty), mask=mask)


kbench_launch = {
    "kernel": "triton_softmax",
    "grid": ["rows"],
    "constexprs": {"BLOCK": "min(next_pow2(cols), 8192)"},
    "num_warps": 8,
    "num_stages": 1,
}
