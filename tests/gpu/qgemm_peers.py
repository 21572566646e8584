#!/usr/bin/env python3
"""Peers of the quantized GEMMs (kernels/quant/w4a16_gemm, fp8_gemm) in the same GPU run.

  w4a16: cuBLAS bf16 through torch.matmul(A, W.t()) with bf16 weights, the decode (M = 1, 16, 24, 32, 48, 64, 128)
         and prefill (M = 4096) shapes over N x K in {4096x4096, 14336x4096, 4096x14336};
  fp8:   torch._scaled_mm (cuBLASLt FP8, per-tensor scales, use_fast_accum=False) on the canonical
         shapes, the prefill shapes above at M = 4096 and DeepSeek's 2112x7168.
Each is timed with CUDA events, cold L2 (a 512 MiB write before each sample), median of the samples.
With --bench (kbench-bench --json output of the same run), prints every kbench result of those ops
beside the peer on the same shape: kbench median, peer median and peer time / kbench time (> 1:
kbench faster).

  qgemm_peers.py [--bench BENCH.jsonl] [--samples 20] [--ops w4a16,fp8]
"""
import argparse
import json
import statistics
import sys

import torch

W4_SHAPES = [(m, n, k) for m in (1, 16, 24, 32, 48, 64, 128, 4096) for (n, k) in ((4096, 4096), (14336, 4096), (4096, 14336))]
FP8_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096), (4096, 4096, 14336), (4096, 2112, 7168)]


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


def w4a16_peers(samples, flush):
    out = {}
    for m, n, k in W4_SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        out[("w4a16_gemm", m, n, k)] = ("torch.matmul bf16", time_us(lambda: torch.matmul(a, w.t()), samples, flush))
        del a, w
    return out


def fp8_peers(samples, flush):
    out = {}
    one = torch.ones((), device="cuda", dtype=torch.float32)
    for m, n, k in FP8_SHAPES:
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        fn = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                      use_fast_accum=False)
        out[("fp8_gemm", m, n, k)] = ("torch._scaled_mm", time_us(fn, samples, flush))
        fast = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                        use_fast_accum=True)
        out[("fp8_gemm_fast", m, n, k)] = ("torch._scaled_mm fast_accum", time_us(fast, samples, flush))
        del a, b
    return out


def read_results(path):
    """Every JSON object in a kbench-bench --json file. A bench killed by its time box can leave a line
    unterminated, so the next run's first object follows on the same line: decode object by object."""
    with open(path) as f:
        text = f.read()
    decoder, pos, out = json.JSONDecoder(), 0, []
    while True:
        start = text.find("{", pos)
        if start < 0:
            return out
        try:
            obj, pos = decoder.raw_decode(text, start)
            out.append(obj)
        except json.JSONDecodeError:
            pos = start + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="kbench-bench --json output (JSON lines) to set beside the peers")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--ops", default="w4a16,fp8")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device visible to torch")
        return 1
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, cold L2, median of {args.samples}")
    peers = {}
    if "w4a16" in args.ops:
        peers.update(w4a16_peers(args.samples, flush))
    if "fp8" in args.ops:
        peers.update(fp8_peers(args.samples, flush))
    print("\n| peer | M x N x K | median us | TFLOP/s |")
    print("|---|---|---|---|")
    for (op, m, n, k), (name, us) in peers.items():
        print(f"| {name} | {m}x{n}x{k} | {us:.1f} | {2 * m * n * k / us / 1e6:.1f} |")
    if args.bench:
        print("\n| op | variant | M x N x K | kbench us | peer us (peer) | peer / kbench time |")
        print("|---|---|---|---|---|---|")
        results = read_results(args.bench)
        for r in results:
            op = r.get("op") or r.get("problem", {}).get("op", "")
            dims = {d["name"]: int(d.get("value", 0)) for d in r.get("problem", {}).get("dims", [])}
            key = (op, dims.get("M", 0), dims.get("N", 0), dims.get("K", 0))
            t = r.get("timing", {}).get("median_ns")
            if r.get("status") != "OK" or not t or key not in peers:
                continue
            us = float(t) / 1e3
            name, peer_us = peers[key]
            print(f"| {op} | {r.get('variant')} | {key[1]}x{key[2]}x{key[3]} | {us:.1f} | {peer_us:.1f} ({name}) "
                  f"| {peer_us / us:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
