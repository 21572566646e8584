#!/usr/bin/env python3
"""kbench-bench --shape: ',' separates one shape's dims, ';' separates shapes (the --help's promise).

Runs the binary on the CPU backend (quick calibration into a temporary cache, 1 ms per item) and
reads its JSON lines: M=8,N=8,K=8 is one gemm problem of three dims, "M=8,N=8,K=8;4x4x4" two, and a
malformed shape is a usage error naming --shape.
Usage: bench_shape_test.py PATH_TO_KBENCH_BENCH
"""
import json
import os
import subprocess
import sys
import tempfile


def bench(binary, tmp, shape, name):
    out = os.path.join(tmp, name + ".jsonl")
    r = subprocess.run([binary, "--op", "gemm", "--backend", "cpu", "--variant", "cpu_naive", "--dtype", "f32",
                        "--shape", shape, "--quick_calibration", "--calibration_cache", os.path.join(tmp, "cal"),
                        "--max_time_ms", "1", "--json", out], capture_output=True, text=True, timeout=600)
    lines = [json.loads(l) for l in open(out)] if os.path.exists(out) else []
    return r, lines


def dims(result):
    return [(d.get("name", ""), int(d["value"])) for d in result["problem"]["dims"]]


def main():
    binary = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        r, lines = bench(binary, tmp, "M=8,N=8,K=8", "one")
        if r.returncode != 0 or len(lines) != 1 or dims(lines[0]) != [("M", 8), ("N", 8), ("K", 8)]:
            failures.append(f"M=8,N=8,K=8: exit {r.returncode}, {len(lines)} results "
                            f"{[dims(l) for l in lines]}; stderr: {r.stderr[-300:]}")
        r, lines = bench(binary, tmp, "M=8,N=8,K=8;4x4x4", "two")
        got = sorted(tuple(v for _, v in dims(l)) for l in lines)
        if r.returncode != 0 or got != [(4, 4, 4), (8, 8, 8)]:
            failures.append(f"M=8,N=8,K=8;4x4x4: exit {r.returncode}, problems {got}; stderr: {r.stderr[-300:]}")
        r, lines = bench(binary, tmp, "M=8,N=", "bad")
        if r.returncode != 2 or "--shape" not in r.stderr or lines:
            failures.append(f"M=8,N=: exit {r.returncode} (want 2), stderr: {r.stderr[-300:]}")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
