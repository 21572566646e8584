#!/usr/bin/env python3
"""PyTorch's peers on kbench's attention_varlen problems (packed variable-length batches), timed as
kbench times its rungs: cold L2 (a buffer twice the L2 is written before every timed launch), CUDA
events around the one launch, the median of the samples. TFLOP/s use kbench's cost model: 4*H*d per
real unmasked pair (bottom-right causal per sequence), so every row's TFLOP/s is useful work per
second and the ratios compare times.

Peers:
  fa2_varlen         torch.ops.aten._flash_attention_forward on the packed q [total_q,H,d], k, v
                     [total_kv,H_kv,d] with cu_seqlens: PyTorch's FlashAttention-2 varlen kernel (the
                     one torch.nn.attention.varlen.varlen_attn calls), GQA native.
  varlen_attn        torch.nn.attention.varlen.varlen_attn, the public API, where this PyTorch has it
                     (GQA through enable_gqa where it exists, else listed with its error).
  sdpa_flash_padded  SDPA's FlashAttention-2 and cuDNN backends on the batch padded to the longest
  sdpa_cudnn_padded  sequence [seqs,H,max_len,d]: what an engine without varlen pays. Causal: is_causal
                     masks the right padding of every real row (prefix 0); not causal: no mask (same
                     FLOPs as a key-padding mask, which these backends do not take).

  attention_varlen_peers.py [--preset skewed] [--dtype bf16] [--samples 20] [--json OUT.jsonl]
                            [--kbench KBENCH_JSONL]

Prints one table; with --kbench (the --json file of kbench-bench runs on the same presets) each
kbench rung's ratio to each peer. A peer that cannot run a problem is listed with its error.
"""
import argparse
import inspect
import itertools
import json
import statistics
import sys

M64 = (1 << 64) - 1


def splitmix64(x):  # kernels/core/random.cc
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


# The presets of kernels/attention/attention_varlen/attention_varlen_op.cc:
# (seqs, H, H_kv, d, len_lo, len_hi, first_len, prefix, causal).
PRESETS = {
    "skewed": [(32, 32, 8, 128, 512, 1024, 8192, 0, c) for c in (False, True)],
    "ci": [(8, 32, 8, 128, 256, 2048, 0, 0, True)],
}


def q_lens(seqs, lo, hi, first):
    span = hi - lo + 1
    return [first if b == 0 and first > 0 else lo + (splitmix64(b) % span if span > 1 else 0) for b in range(seqs)]


def flops(prob):
    seqs, h, hkv, d, lo, hi, first, prefix, causal = prob
    pairs = 0
    for nq in q_lens(seqs, lo, hi, first):
        nkv = nq + prefix
        pairs += nq * (nkv - nq) + nq * (nq + 1) / 2 if causal else nq * nkv
    return 4.0 * h * d * pairs


def label(prob):
    seqs, h, hkv, d, lo, hi, first, prefix, causal = prob
    lens = q_lens(seqs, lo, hi, first)
    return f"{seqs}x{h}x{hkv}x{d}x{lo}x{hi}x{first}x{prefix}x{sum(lens)}x{sum(lens) + seqs * prefix}x{seqs + 1}" + (
        " causal" if causal else "")


def timed(torch, fn, samples, flush):
    fn()  # plan / compile, and fail early
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(samples):
        flush.zero_()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)


def peers(torch, prob, dt, gen):
    """(name, callable) for each peer of one problem; building one may raise (reported as its error)."""
    import torch.nn.functional as F
    seqs, h, hkv, d, lo, hi, first, prefix, causal = prob
    lens = q_lens(seqs, lo, hi, first)
    kv_lens = [n + prefix for n in lens]
    tq, tk = sum(lens), sum(kv_lens)
    q = torch.empty(tq, h, d, dtype=dt, device="cuda").uniform_(-2, 2, generator=gen)
    k = torch.empty(tk, hkv, d, dtype=dt, device="cuda").uniform_(-2, 2, generator=gen)
    v = torch.empty(tk, hkv, d, dtype=dt, device="cuda").uniform_(-1, 1, generator=gen)
    off_q = [0] + list(itertools.accumulate(lens))
    off_k = [0] + list(itertools.accumulate(kv_lens))
    cu_q = torch.tensor(off_q, dtype=torch.int32, device="cuda")
    cu_k = torch.tensor(off_k, dtype=torch.int32, device="cuda")
    scale = d ** -0.5
    out = [("fa2_varlen", lambda: torch.ops.aten._flash_attention_forward(
        q, k, v, cu_q, cu_k, max(lens), max(kv_lens), 0.0, causal, False, scale=scale))]
    try:
        from torch.nn.attention.varlen import varlen_attn
        params = inspect.signature(varlen_attn).parameters
        kw = {}
        if causal:
            if "is_causal" in params:
                kw["is_causal"] = True
            elif "window_size" in params:
                kw["window_size"] = (-1, 0)
        if hkv != h and "enable_gqa" in params:
            kw["enable_gqa"] = True
        out.append(("varlen_attn", lambda: varlen_attn(q, k, v, cu_q, cu_k, max(lens), max(kv_lens), **kw)))
    except ImportError as e:
        out.append(("varlen_attn", e))
    # Padded to the longest sequence, the rows of each sequence at the front of its slot.
    n = max(kv_lens)
    qp = torch.zeros(seqs, h, max(lens), d, dtype=dt, device="cuda")
    kp = torch.zeros(seqs, hkv, n, d, dtype=dt, device="cuda")
    vp = torch.zeros(seqs, hkv, n, d, dtype=dt, device="cuda")
    for b in range(seqs):
        qp[b, :, :lens[b]] = q[off_q[b]:off_q[b + 1]].transpose(0, 1)
        kp[b, :, :kv_lens[b]] = k[off_k[b]:off_k[b + 1]].transpose(0, 1)
        vp[b, :, :kv_lens[b]] = v[off_k[b]:off_k[b + 1]].transpose(0, 1)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def sdpa(backend):
        def run():
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(qp, kp, vp, is_causal=causal, enable_gqa=hkv != h)
        return run
    out.append(("sdpa_flash_padded", sdpa(SDPBackend.FLASH_ATTENTION)))
    out.append(("sdpa_cudnn_padded", sdpa(SDPBackend.CUDNN_ATTENTION)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="skewed")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--json", default="")
    ap.add_argument("--kbench", default="", help="kbench-bench --json output for the same problems")
    args = ap.parse_args()
    import torch

    dt = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    dev = torch.cuda.get_device_properties(0)
    l2 = getattr(dev, "L2_cache_size", 64 << 20)
    flush = torch.empty(max(2 * l2, 8 << 20), dtype=torch.uint8, device="cuda")
    print(f"device {dev.name}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {args.dtype}, "
          f"cold L2 ({flush.numel() >> 20} MiB flush), median of {args.samples}")
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(1)
    for preset in args.preset.split(","):
        for prob in PRESETS[preset]:
            for name, fn in peers(torch, prob, dt, gen):
                row = {"preset": preset, "problem": label(prob), "backend": name, "dtype": args.dtype}
                try:
                    if isinstance(fn, Exception):
                        raise fn
                    t = timed(torch, fn, args.samples, flush)
                    row.update(median_us=t * 1e6, tflops=flops(prob) / t / 1e12)
                except Exception as e:  # noqa: BLE001 - report any refusal as a row
                    row["error"] = str(e).splitlines()[0][:100] if str(e) else type(e).__name__
                rows.append(row)
            torch.cuda.empty_cache()
    kb = {}
    if args.kbench:
        with open(args.kbench) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:  # a run cut short leaves a partial last line
                    continue
                if r.get("status") not in ("OK", None) or "timing" not in r or r.get("op") not in (None, "attention_varlen"):
                    continue
                kb.setdefault(r["variant"], []).append(r)
    print(f"{'problem':58} {'peer':18} {'median_us':>10} {'TFLOP/s':>8}")
    for r in rows:
        if "error" in r:
            print(f"{r['problem']:58} {r['backend']:18} {'-':>10} {'-':>8}  error: {r['error']}")
        else:
            print(f"{r['problem']:58} {r['backend']:18} {r['median_us']:10.1f} {r['tflops']:8.1f}")
    if kb:
        print("\nspeed against each peer: peer time / rung time (>= 1: the rung is as fast or faster)")
        by_problem = {}
        for r in rows:
            if "error" not in r:
                by_problem.setdefault(r["problem"], {})[r["backend"]] = r["median_us"]
        for variant, results in kb.items():
            for r in results:
                # proto3 JSON leaves zero values out (first_len 0, prefix 0)
                dims = {dd["name"]: int(dd.get("value", 0)) for dd in r["problem"]["dims"]}
                if "seqs" not in dims:
                    continue
                us = float(r["timing"]["median_ns"]) / 1e3
                prob = (dims["seqs"], dims["H"], dims["H_kv"], dims["d"], dims["len_lo"], dims["len_hi"], dims["first_len"],
                        dims["prefix"], "causal" in r["problem"].get("flags", []))
                key = label(prob)
                ratios = "  ".join(f"{p}: {t / us:.2f}x" for p, t in sorted(by_problem.get(key, {}).items()))
                print(f"{variant:20} {key:58} {us:10.1f} us {flops(prob) / (us * 1e-6) / 1e12:7.1f} TFLOP/s  {ratios}")
    if args.json:
        with open(args.json, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    return 0 if all("error" not in r for r in rows if r["backend"] == "fa2_varlen") else 1


if __name__ == "__main__":
    sys.exit(main())
