#!/usr/bin/env python3
"""Issue 22's speed targets, checked from one run of kbench-bench (tests/gpu/run-on-gpu.sh, phase targets).

  targets.py plan               one line per op: OP<TAB>VARIANTS<TAB>SHAPES, the kbench-bench run the
                                targets need (the best rungs and the vendor baseline in one process)
  targets.py report JSONL...    a Markdown table: each target, the figure it is judged by, met or missed;
                                exits 1 when a result the targets need is missing or not OK

Two kinds of target: a rung's share of its calibrated ceiling (the op's own traffic mix, as kbench-bench's
%ceil), and the vendor baseline's median over the best rung's, both from the same process. Only numbers
read from the results are printed: nothing here is estimated.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # noqa: E402  (tests/gpu/tables.py: the JSON reading the README tables use)


def shape(named, flags=()):
    """A kbench-bench --shape: named dims (the op derives the rest), then the flags."""
    return ",".join([f"{k}={v}" for k, v in named.items()] + list(flags))


def rows(n, cols):
    return {"rows": n, "cols": cols}


def mnk(m, n, k):
    return {"M": m, "N": n, "K": k}


DECODE = [(n, k) for n, k in ((4096, 4096), (14336, 4096), (4096, 14336))]

# Each target: what it names, the op, the rungs that may meet it (the best counts), the problems (named
# dims and flags), and either min_ceiling (a fraction of the calibrated ceiling) or baseline + min_ratio
# (baseline median / rung median). "each": every problem must meet it; otherwise the target's first
# problem is the one judged and the others are context.
TARGETS = [
    dict(name="fp8_quant >= 90% of ceiling", op="fp8_quant", rungs=["cuda_v3_ring"],
         problems=[(rows(32768, 4096), ()), (rows(32768, 4096), ("static_scale",)), (rows(8192, 4096), ())],
         min_ceiling=0.90),
    dict(name="rmsnorm_fp8_quant >= 90% of ceiling", op="rmsnorm_fp8_quant",
         rungs=["cuda_v3_fused_ring", "cuda_v2_fused"],
         problems=[(rows(32768, 4096), ()), (rows(8192, 4096), ())], min_ceiling=0.90),
    dict(name="silu_mul_fp8_quant >= 90% of ceiling", op="silu_mul_fp8_quant", rungs=["cuda_v2_fused"],
         problems=[({"rows": 32768, "d": 4096}, ()), ({"rows": 8192, "d": 14336}, ()), ({"rows": 8192, "d": 4096}, ())],
         min_ceiling=0.90),
    dict(name="silu_and_mul >= 90% of ceiling", op="silu_and_mul", rungs=["cuda_v2_vec16"],
         problems=[({"rows": 32768, "d": 4096}, ()), ({"rows": 8192, "d": 14336}, ()), ({"rows": 8192, "d": 4096}, ())],
         min_ceiling=0.90),
    dict(name="rope >= 85% of ceiling (NeoX, GPT-J)", op="rope", rungs=["cuda_v2_computed", "cuda_v1_cache"],
         problems=[({"tokens": 8192, "q_heads": 32, "kv_heads": 8, "head_dim": 128}, ()),
                   ({"tokens": 8192, "q_heads": 32, "kv_heads": 8, "head_dim": 128}, ("gptj",))],
         min_ceiling=0.85, each=True),
    dict(name="w4a16 M = 1 >= 3.0x cuBLAS bf16", op="w4a16_gemm", rungs=["cuda_v4_mma_gemv"],
         problems=[(mnk(1, 14336, 4096), ())], baseline="cublas_bf16", min_ratio=3.0),
    dict(name="w4a16 M = 16 >= 2.0x cuBLAS bf16", op="w4a16_gemm", rungs=["cuda_v4_mma_gemv", "cuda_v5_wgmma_mixed"],
         problems=[(mnk(16, 14336, 4096), ())], baseline="cublas_bf16", min_ratio=2.0),
    dict(name="w4a16 never slower than cuBLAS bf16 below M = 64", op="w4a16_gemm",
         rungs=["cuda_v4_mma_gemv", "cuda_v5_wgmma_mixed"],
         problems=[(mnk(m, n, k), ()) for m in (1, 16, 32, 48, 63) for n, k in DECODE],
         baseline="cublas_bf16", min_ratio=1.0, each=True),
    dict(name="w4a16 M = 4096 >= 0.9x cuBLAS bf16", op="w4a16_gemm",
         rungs=["cuda_v1_dequant_then_gemm", "cuda_v5_wgmma_mixed"],
         problems=[(mnk(4096, 4096, 4096), ())], baseline="cublas_bf16", min_ratio=0.9),
    dict(name="fp8_gemm per-tensor >= 95% of cuBLASLt", op="fp8_gemm",
         rungs=["cuda_wgmma_fp8_n256", "cuda_wgmma_fp8"],
         problems=[(mnk(4096, 4096, 4096), ()), (mnk(8192, 8192, 8192), ())],
         baseline="cublaslt_fp8", min_ratio=0.95, each=True),
    dict(name="fp8_gemm_block >= 1.0x cuBLASLt block-scaled", op="fp8_gemm_block",
         rungs=["cuda_wgmma_fp8", "cuda_wgmma_fp8_m192"],
         problems=[(mnk(4096, 2112, 7168), ()), (mnk(4096, 4096, 4096), ()), (mnk(8192, 8192, 8192), ()),
                   (mnk(4096, 14336, 4096), ()), (mnk(4096, 4096, 14336), ())],
         baseline="cublaslt_fp8_block", min_ratio=1.0, each=True),
]


def plan(targets=TARGETS):
    """OP, variants, shapes: one kbench-bench run an op, every rung and baseline its targets name."""
    ops = {}
    for t in targets:
        variants, shapes = ops.setdefault(t["op"], ([], []))
        for v in t["rungs"] + ([t["baseline"]] if "baseline" in t else []):
            if v not in variants:
                variants.append(v)
        for named, flags in t["problems"]:
            s = shape(named, flags)
            if s not in shapes:
                shapes.append(s)
    return [(op, ",".join(v), ";".join(s)) for op, (v, s) in ops.items()]


snake = tables.snake  # proto JSON may use lowerCamelCase keys; the names here are the proto field names


def load(paths):
    """Every result of the JSONL (or JSON array) files; a missing file gives none."""
    return [r for p in paths for r in tables.load(p)]


def matches(r, op, named, flags):
    p = r.get("problem", {})
    dims = {d.get("name"): int(d.get("value", 0)) for d in p.get("dims", [])}
    return (r.get("op") == op and all(dims.get(k) == v for k, v in named.items())
            and sorted(p.get("flags", [])) == sorted(flags))


def find(results, op, variant, named, flags):
    """The last result of this variant on this problem (a rerun replaces an earlier one)."""
    found = [r for r in results if r.get("variant") == variant and matches(r, op, named, flags)]
    return found[-1] if found else None


def ceiling_fraction(r):
    """kbench-bench's %ceil: the calibrated ceiling's bandwidth or FLOP share, whichever is larger."""
    for c in r.get("roofline", {}).get("ceilings", []):
        if c.get("source") == "calibrated":
            return max(float(c.get("bandwidth_fraction", 0)), float(c.get("flops_fraction", 0)))
    return None


def median_us(r):
    return float(r["timing"]["median_ns"]) / 1e3


def judge(t, results):
    """(table rows, met, problems) for one target; problems lists what is missing or not OK."""
    out, verdicts, problems = [], [], []
    for named, flags in t["problems"]:
        label = shape(named, flags)
        got = [(v, find(results, t["op"], v, named, flags)) for v in t["rungs"]]
        # A rung may skip a problem it does not take (v5 past M = 128); any other status is a failure.
        problems += [f"{t['op']} {v} {label}: {'missing' if r is None else r.get('status')}" for v, r in got
                     if r is None or r.get("status") not in ("OK", "SKIPPED")]
        ok = [(v, r) for v, r in got if r is not None and r.get("status") == "OK"]
        if not ok:
            problems.append(f"{t['op']} {label}: no rung of {', '.join(t['rungs'])} ran")
        if "baseline" in t:
            b = find(results, t["op"], t["baseline"], named, flags)
            if b is None or b.get("status") != "OK":
                problems.append(f"{t['op']} {t['baseline']} {label}: {'missing' if b is None else b.get('status')}")
                verdicts.append(False)
                out.append((t["name"], label, "-", "-", "baseline missing", False))
                continue
            if not ok:
                verdicts.append(False)
                out.append((t["name"], label, "-", "-", "no rung ran", False))
                continue
            v, r = min(ok, key=lambda vr: median_us(vr[1]))
            ratio = median_us(b) / median_us(r)
            met = ratio >= t["min_ratio"]
            figure = f"{median_us(r):.2f} us vs {t['baseline']} {median_us(b):.2f} us: {ratio:.2f}x"
            out.append((t["name"], label, v, figure, f">= {t['min_ratio']:.2f}x", met))
        else:
            scored = [(v, r, ceiling_fraction(r)) for v, r in ok if ceiling_fraction(r) is not None]
            if not scored:
                verdicts.append(False)
                out.append((t["name"], label, "-", "-", "no rung ran", False))
                continue
            v, r, f = max(scored, key=lambda x: x[2])
            met = f >= t["min_ceiling"]
            figure = f"{median_us(r):.2f} us: {100 * f:.1f}% of the calibrated ceiling"
            out.append((t["name"], label, v, figure, f">= {100 * t['min_ceiling']:.0f}%", met))
        verdicts.append(met)
    met = all(verdicts) if t.get("each") else (verdicts[0] if verdicts else False)
    return out, met, problems


def report(results, targets=TARGETS):
    lines = ["| target | problem | best rung | measured | threshold | |", "| --- | --- | --- | --- | --- | --- |"]
    summary, problems = [], []
    for t in targets:
        rows_, met, bad = judge(t, results)
        problems += bad
        for name, label, v, figure, threshold, ok in rows_:
            lines.append(f"| {name} | {label} | {v} | {figure} | {threshold} | {'met' if ok else 'missed'} |")
        summary.append(f"{t['name']}: {'MET' if met else 'MISSED'}")
    return lines + [""] + summary, problems


def main(argv):
    if len(argv) >= 2 and argv[1] == "plan":
        for op, variants, shapes in plan():
            print(f"{op}\t{variants}\t{shapes}")
        return 0
    if len(argv) >= 3 and argv[1] == "report":
        lines, problems = report(load(argv[2:]))
        print("\n".join(lines))
        for p in problems:
            print(f"NOT OK: {p}", file=sys.stderr)
        return 1 if problems else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
