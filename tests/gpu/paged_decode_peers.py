#!/usr/bin/env python3
"""The peer of the paged_decode ladder: PyTorch SDPA decoding one query token per sequence against a
contiguous KV cache, on the decode preset's shapes (Llama-3-8B: 32 query heads, 8 KV heads, d 128;
batch 1, 16, 64; context 1k, 4k, 32k), timed with CUDA events, L2 flushed before every sample
(a 512 MiB write), median of the samples.

GQA: enable_gqa=True (K and V stay [batch, 8, context, 128], each byte read once, as the kbench
rungs read them); per backend (flash, cuDNN, efficient, and PyTorch's own choice), a backend that
refuses the shape is reported as such. Bytes: K, V, q read once and out written once (the paged
rungs also read their block table, < 0.01% more).

  paged_decode_peers.py [--bench BENCH.jsonl] [--samples 30]

Also times a read-only stream (torch.sum over 4 GiB of bf16) for scale. With --bench (kbench-bench
--json output of the same run), also prints the kbench rungs beside the best SDPA backend: median,
GB/s, % of the calibrated ceiling the harness reports (its name in the column: read-only for this
op's mix), % of the read stream, ratio to SDPA.
Exit 1 when no backend ran a shape.
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F

H, H_KV, D = 32, 8, 128
SHAPES = [(b, c) for b in (1, 16, 64) for c in (1024, 4096, 32768)]


def backends():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    out = [("default", None)]
    for name in ("FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION"):
        if hasattr(SDPBackend, name):
            out.append((name.split("_")[0].lower(), getattr(SDPBackend, name)))
    return out, sdpa_kernel


def time_us(fn, samples, flush):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def sdpa_table(samples):
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    kinds, sdpa_kernel = backends()
    rows = {}
    for batch, ctx in SHAPES:
        torch.manual_seed(1)
        q = torch.empty(batch, H, 1, D, device="cuda", dtype=torch.bfloat16).uniform_(-5, 5)
        k = torch.empty(batch, H_KV, ctx, D, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
        v = torch.empty(batch, H_KV, ctx, D, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
        nbytes = 2 * (k.numel() + v.numel() + 2 * q.numel())
        for name, be in kinds:
            def run():
                return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            try:
                if be is None:
                    us = time_us(run, samples, flush)
                else:
                    with sdpa_kernel([be]):
                        us = time_us(run, samples, flush)
                rows[(batch, ctx, name)] = (us, nbytes / us / 1e3)
            except Exception as e:  # a backend that does not take the shape
                rows[(batch, ctx, name)] = (None, str(e).splitlines()[0][:60] if str(e) else type(e).__name__)
        del q, k, v
        torch.cuda.empty_cache()
    return rows, [n for n, _ in kinds]


def label(batch, ctx):
    return f"{batch}x{H}x{H_KV}x{D}x16x{ctx}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="kbench-bench --json output (JSON lines) to set beside SDPA")
    ap.add_argument("--samples", type=int, default=30)
    args = ap.parse_args()
    dev = torch.cuda.get_device_name()
    print(f"device {dev}, torch {torch.__version__}; SDPA decode, one query token, contiguous KV, enable_gqa=True, "
          f"cold L2, median of {args.samples}")
    # A read-only stream for scale, measured by torch beside the harness's own: torch.sum over 4 GiB.
    x = torch.empty(2 << 30, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    read_us = time_us(lambda: x.sum(dtype=torch.float32), args.samples, flush)
    read_gbs = x.numel() * 2 / read_us / 1e3
    print(f"read stream (torch.sum over 4 GiB bf16): {read_us:.0f} us, {read_gbs:.0f} GB/s")
    del x, flush
    torch.cuda.empty_cache()
    rows, names = sdpa_table(args.samples)
    print("| shape (batch x ctx) | " + " | ".join(f"{n} us (GB/s)" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    best, missing = {}, 0
    for batch, ctx in SHAPES:
        cells = []
        for n in names:
            us, x = rows[(batch, ctx, n)]
            if us is None:
                cells.append(f"refused: {x}")
                continue
            cells.append(f"{us:.1f} ({x:.0f})")
            if (batch, ctx) not in best or us < best[(batch, ctx)][0]:
                best[(batch, ctx)] = (us, n)
        missing += (batch, ctx) not in best
        print(f"| {batch} x {ctx} | " + " | ".join(cells) + " |")
    if args.bench:
        print("\n| variant | shape | median us | GB/s | % calibrated ceiling | % read stream | SDPA best us (backend) "
              "| SDPA / kbench time |")
        print("|---|---|---|---|---|---|---|---|")
        with open(args.bench) as f:
            results = [json.loads(line) for line in f if line.strip()]
        for r in results:
            dims = {d["name"]: int(d.get("value", 0)) for d in r["problem"]["dims"]}  # proto JSON omits zeros
            if (dims.get("H"), dims.get("H_kv"), dims.get("page"), dims.get("long_context")) != (H, H_KV, 16, 0):
                continue
            key = (dims["batch"], dims["context"])
            t = r.get("timing", {}).get("median_ns")
            if r.get("status") != "OK" or not t or key not in best:
                continue
            us = float(t) / 1e3
            rf = r.get("roofline", {})
            cal = next((c for c in rf.get("ceilings", []) if c.get("source") == "calibrated"), {})
            sdpa_us, sdpa_name = best[key]
            gbs = float(rf.get('achieved_bytes_per_second', 0)) / 1e9
            print(f"| {r['variant']} | {label(*key)} | {us:.1f} | {gbs:.0f} "
                  f"| {100 * float(cal.get('bandwidth_fraction', 0)):.1f} ({cal.get('bandwidth_ceiling', '?')}) "
                  f"| {100 * gbs / read_gbs:.1f} "
                  f"| {sdpa_us:.1f} ({sdpa_name}) | {sdpa_us / us:.2f} |")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
