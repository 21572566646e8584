#!/usr/bin/env python3
"""torch.compile peers of the quant family and the fused elementwise ops (issue 22), on the shapes of
their canonical presets, timed like kbench times (CUDA events around each call, L2 flushed before
each call, median), and printed as a Markdown table; with --kbench RESULTS.jsonl (kbench-bench
--json), each row also gets the best kbench rung on the same problem and the ratio
torch.compile time / kbench time (above 1: kbench is faster).

    quant_peers.py [--iters N] [--kbench results.jsonl] [--json out.json] [--rows 8192] [--ops a,b]
                   [--budget-s S]

Bytes are each op's minimal traffic as its kbench cost model counts it (inputs read once, outputs
written once), so GB/s compare directly. Exits 1 when a peer cannot run (no CUDA, no torch).
"""
import argparse
import json
import statistics
import sys
import time


def build_cases(torch):
    F = torch.nn.functional
    bf16, fp8 = torch.bfloat16, torch.float8_e4m3fn
    dev = "cuda"

    def quant_rows(y):
        absmax = y.abs().amax(dim=-1, keepdim=True)
        inv = torch.where(absmax > 0, 448.0 / absmax, torch.zeros_like(absmax))
        return (y * inv).clamp(-448.0, 448.0).to(fp8), (absmax / 448.0).squeeze(-1)

    def fp8_quant(x):
        return quant_rows(x.float())

    def fp8_quant_static(x, scale):
        return (x.float() * (1.0 / scale)).clamp(-448.0, 448.0).to(fp8)

    def rmsnorm_fp8_quant(x, w):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * w.float()
        return quant_rows(y)

    def silu_mul_fp8_quant(x):
        d = x.shape[-1] // 2
        return quant_rows(F.silu(x[:, :d].float()) * x[:, d:].float())

    def silu_and_mul(x):
        d = x.shape[-1] // 2
        return (F.silu(x[:, :d].float()) * x[:, d:].float()).to(bf16)

    def rope(q, k, positions, cache, gptj):
        cs = cache.index_select(0, positions)
        half = cs.shape[-1] // 2
        cos, sin = cs[:, None, :half], cs[:, None, half:]

        def rot(x):
            xf = x.float()
            if gptj:
                a, b = xf[..., 0::2], xf[..., 1::2]
                return torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1).flatten(-2).to(bf16)
            a, b = xf[..., :half], xf[..., half:]
            return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1).to(bf16)

        return rot(q), rot(k)

    def rnd(*shape):
        return torch.empty(*shape, device=dev, dtype=bf16).uniform_(-1, 1)

    cases = []  # (op, shape label as kbench prints it, flags, fn, args, bytes); 8192-row shapes first
    w = torch.empty(4096, device=dev, dtype=bf16).uniform_(0.5, 1.5)
    s = torch.tensor(1.0 / 128, device=dev)

    def quant_family(rows):
        x = rnd(rows, 4096)
        cases.append(("fp8_quant", f"{rows}x4096", "", fp8_quant, (x,), rows * 4096 * 3 + rows * 4))
        cases.append(("rmsnorm_fp8_quant", f"{rows}x4096", "", rmsnorm_fp8_quant, (x, w),
                      rows * 4096 * 3 + 4096 * 2 + rows * 4))

    def gated(rows, d):
        x = rnd(rows, 2 * d)
        cases.append(("silu_mul_fp8_quant", f"{rows}x2x{d}", "", silu_mul_fp8_quant, (x,), rows * d * 5 + rows * 4))
        cases.append(("silu_and_mul", f"{rows}x2x{d}", "", silu_and_mul, (x,), rows * d * 6))

    quant_family(8192)
    gated(8192, 4096)
    tokens, qh, kh, hd = 8192, 32, 8, 128
    q, k = rnd(tokens, qh, hd), rnd(tokens, kh, hd)
    positions = torch.randint(0, tokens, (tokens,), device=dev, dtype=torch.int32)
    inv_freq = (500000.0 ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)).float()
    ang = torch.arange(tokens, dtype=torch.float32)[:, None] * inv_freq[None, :]
    cache = torch.cat((ang.double().cos(), ang.double().sin()), dim=-1).float().to(dev)
    rope_bytes = tokens * (qh + kh) * hd * 4 + tokens * 4
    for gptj in (False, True):
        cases.append(("rope", f"{tokens}x{qh}x{kh}x{hd}", "gptj" if gptj else "",
                      lambda q, k, p, c, g=gptj: rope(q, k, p, c, g), (q, k, positions, cache), rope_bytes))
    gated(8192, 14336)
    quant_family(32768)
    gated(32768, 4096)
    x = rnd(32768, 4096)
    cases.append(("fp8_quant", "32768x4096", "static_scale", fp8_quant_static, (x, s), 32768 * 4096 * 3 + 4))
    return cases


def time_cold(torch, fn, args, iters):
    flush = torch.empty(512 << 20, device="cuda", dtype=torch.uint8)  # ten times the H200's L2
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)  # us
    return statistics.median(times)


def kbench_best(path):
    """(op, shape label, flags) -> (variant, median us, % of calibrated copy) of the fastest OK rung."""
    best = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if r.get("status") != "OK":
                continue
            p = r.get("problem", {})
            shape = "x".join(str(d.get("value", 0)) for d in p.get("dims", []))
            flags = ",".join(f for f in p.get("flags", []) if f in ("static_scale", "gptj"))
            us = float(r.get("timing", {}).get("median_ns", 0)) / 1e3
            pct = None
            for c in r.get("roofline", {}).get("ceilings", []):
                if c.get("source") == "calibrated":
                    pct = 100 * float(c.get("bandwidth_fraction", 0))
            key = (r.get("op"), shape, flags)
            if us > 0 and (key not in best or us < best[key][1]):
                best[key] = (r.get("variant"), us, pct)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iters", type=int, default=30, help="timed calls per case (median)")
    ap.add_argument("--kbench", help="kbench-bench --json results on the same device, for the ratio column")
    ap.add_argument("--json", help="write the peers' results here as JSON")
    ap.add_argument("--rows", type=int, default=0, help="only the cases of this many rows (tokens); 0: all")
    ap.add_argument("--ops", default="", help="only these ops (comma-separated); default all")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="start no case after this many seconds (compiles are slow on a fresh host); 0: no limit")
    a = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"quant_peers: torch is not importable: {e}", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("quant_peers: no CUDA device", file=sys.stderr)
        return 1
    best = kbench_best(a.kbench) if a.kbench else {}
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, cold L2, median of {a.iters}")
    print()
    print("| op | shape | flags | torch.compile (us) | GB/s | best kbench rung | kbench (us) "
          "| kbench % of calibrated copy | torch.compile / kbench |")
    print("| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |")
    out, failed, t0 = [], 0, time.monotonic()
    for op, shape, flags, fn, args, nbytes in build_cases(torch):
        if (a.rows and not shape.startswith(f"{a.rows}x")) or (a.ops and op not in a.ops.split(",")):
            continue
        if a.budget_s and time.monotonic() - t0 > a.budget_s:
            print(f"| {op} | {shape} | {flags} | not run: over the {a.budget_s:.0f} s budget | | | | | |")
            continue
        try:
            us = time_cold(torch, torch.compile(fn), args, a.iters)
        except Exception as e:  # a peer that does not compile is reported, and fails the run
            print(f"| {op} | {shape} | {flags} | failed: {str(e).splitlines()[0][:80]} | | | | | |")
            failed += 1
            continue
        gbs = nbytes / us / 1e3
        k = best.get((op, shape, flags))
        pct = f"{k[2]:.1f}" if k and k[2] is not None else ""
        kcols = f"{k[0]} | {k[1]:.1f} | {pct} | {us / k[1]:.2f}" if k else "| | |"
        print(f"| {op} | {shape} | {flags} | {us:.1f} | {gbs:.0f} | {kcols} |")
        out.append({"op": op, "shape": shape, "flags": flags, "torch_compile_us": us, "gb_per_s": gbs,
                    "kbench": {"variant": k[0], "us": k[1]} if k else None})
        sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
