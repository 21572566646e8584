#!/usr/bin/env python3
"""PyTorch's SDPA on kbench's attention problems, timed as kbench times its rungs (the peers of
kernels/attention/README.md): the FlashAttention-2 backend and the cuDNN backend, each problem with a
cold L2 (a buffer twice the L2 is written before every timed launch), CUDA events around the one
launch, the median of the samples. TFLOP/s use kbench's cost model (4*B*H*d per unmasked pair,
bottom-right causal), so the ratios to kbench's rungs compare times.

  attention_peers.py [--preset canonical,gqa] [--dtype bf16] [--samples 30] [--json OUT.jsonl]
                     [--kbench KBENCH_JSONL]

Prints one table; with --json also one JSON line per (problem, backend). With --kbench (the --json
file of a kbench-bench run on the same presets) it adds each kbench rung's ratio to each backend.
A backend that cannot run a problem (GQA without enable_gqa support, an old PyTorch) is listed with
its error, never left out silently.
"""
import argparse
import json
import math
import statistics
import sys

# The presets of kernels/attention/attention/attention_op.cc: (B, H, H_kv, N_q, N_kv, d, causal).
PRESETS = {
    "canonical": [(8, 16, 16, 4096, 4096, 128, c) for c in (False, True)] +
                 [(16, 16, 16, 2048, 2048, 64, c) for c in (False, True)],
    "gqa": [(4, 32, 8, 4096, 4096, 128, c) for c in (False, True)],
    "ci": [(2, 32, 8, 2048, 2048, 128, True)],
}


def pairs(nq, nkv, causal):
    return nq * (nkv - nq) + nq * (nq + 1) / 2 if causal else nq * nkv


def flops(b, h, hkv, nq, nkv, d, causal):
    return 4.0 * b * h * pairs(nq, nkv, causal) * d


def label(b, h, hkv, nq, nkv, d, causal):
    return f"{b}x{h}x{hkv}x{nq}x{nkv}x{d}" + (" causal" if causal else "")


def time_backend(torch, backend, q, k, v, causal, gqa, samples, flush):
    from torch.nn.attention import sdpa_kernel
    import torch.nn.functional as F
    kw = {"is_causal": causal}
    if gqa:
        kw["enable_gqa"] = True
    with sdpa_kernel([backend]):
        out = F.scaled_dot_product_attention(q, k, v, **kw)  # compile / plan, and fail early
        for _ in range(3):
            F.scaled_dot_product_attention(q, k, v, **kw)
        torch.cuda.synchronize()
        times = []
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(samples):
            flush.zero_()  # evicts q, k, v from L2
            start.record()
            F.scaled_dot_product_attention(q, k, v, **kw)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="canonical,gqa")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--json", default="")
    ap.add_argument("--kbench", default="", help="kbench-bench --json output for the same problems")
    args = ap.parse_args()
    import torch
    from torch.nn.attention import SDPBackend

    dt = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    dev = torch.cuda.get_device_properties(0)
    l2 = getattr(dev, "L2_cache_size", 64 << 20)
    flush = torch.empty(max(2 * l2, 8 << 20), dtype=torch.uint8, device="cuda")
    print(f"device {dev.name}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {args.dtype}, "
          f"cold L2 ({flush.numel() >> 20} MiB flush), median of {args.samples}")
    backends = [("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)]
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(1)
    for preset in args.preset.split(","):
        for prob in PRESETS[preset]:
            b, h, hkv, nq, nkv, d, causal = prob
            q = torch.empty(b, h, nq, d, dtype=dt, device="cuda").uniform_(-2, 2, generator=gen)
            k = torch.empty(b, hkv, nkv, d, dtype=dt, device="cuda").uniform_(-2, 2, generator=gen)
            v = torch.empty(b, hkv, nkv, d, dtype=dt, device="cuda").uniform_(-1, 1, generator=gen)
            for name, backend in backends:
                row = {"preset": preset, "problem": label(*prob), "backend": name, "dtype": args.dtype}
                try:
                    t, _ = time_backend(torch, backend, q, k, v, causal, hkv != h, args.samples, flush)
                    row.update(median_us=t * 1e6, tflops=flops(*prob) / t / 1e12)
                except Exception as e:  # noqa: BLE001 - report any backend refusal as a row
                    row["error"] = str(e).splitlines()[0][:100] if str(e) else type(e).__name__
                rows.append(row)
            del q, k, v
    kb = {}
    if args.kbench:
        with open(args.kbench) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:  # a run cut short by a timeout leaves a partial last line
                    continue
                if r.get("status") not in ("OK", None) or "timing" not in r:
                    continue
                kb.setdefault(r["variant"], []).append(r)
    print(f"{'problem':34} {'backend':11} {'median_us':>10} {'TFLOP/s':>8}")
    for r in rows:
        if "error" in r:
            print(f"{r['problem']:34} {r['backend']:11} {'-':>10} {'-':>8}  error: {r['error']}")
        else:
            print(f"{r['problem']:34} {r['backend']:11} {r['median_us']:10.1f} {r['tflops']:8.1f}")
    if kb:
        print("\nspeed against each peer: peer time / rung time (>= 1: the rung is as fast or faster)")
        by_problem = {}
        for r in rows:
            if "error" not in r:
                by_problem.setdefault(r["problem"], {})[r["backend"]] = r["median_us"]
        for variant, results in kb.items():
            for r in results:
                us = float(r["timing"]["median_ns"]) / 1e3
                dims = {dd["name"]: int(dd["value"]) for dd in r["problem"]["dims"]}
                causal = "causal" in r["problem"].get("flags", [])
                key = label(dims["B"], dims["H"], dims["H_kv"], dims["N_q"], dims["N_kv"], dims["d"], causal)
                peers = by_problem.get(key, {})
                ratios = "  ".join(f"{p}/{variant}: {peers[p] / us:.2f}x" for p in sorted(peers))
                tf = flops(dims["B"], dims["H"], dims["H_kv"], dims["N_q"], dims["N_kv"], dims["d"], causal) / (us * 1e-6) / 1e12
                print(f"{variant:20} {key:34} {us:10.1f} us {tf:7.1f} TFLOP/s  {ratios}")
    if args.json:
        with open(args.json, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    return 0 if all("error" not in r for r in rows if r["backend"] == "sdpa_flash" and r["problem"].find("x32x8x") < 0) else 1


if __name__ == "__main__":
    sys.exit(main())
