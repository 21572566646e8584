#!/usr/bin/env python3
"""Tables for tests/gpu/run-multi-gpu.sh, from the JSON results it saved in OUT.

  multi_gpu_compare.py OUT [--max-diff-pct 2]   medians alone vs concurrent, per GPU; exit 1 when a
                                                difference exceeds the mark or a result is missing
  multi_gpu_compare.py OUT --isolation          the fault job's and the normal job's results; exit 1
                                                unless every normal result is OK on the other GPU
"""
import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tables import load  # noqa: E402  (proto JSON or JSON lines, keys in proto names)


def key(r):
    dims = "x".join(str(int(d["value"])) for d in r["problem"]["dims"])
    return (r["op"], r["variant"], dims, r["problem"].get("dtype", "").replace("DTYPE_", "").lower())


def device(r):
    return r.get("device", {}).get("uuid", "?")


def ok(r):
    return r.get("status") == "OK" and "median_ns" in r.get("timing", {})


def concurrency(out, max_diff):
    # alone[(key, device)] -> medians; concurrent likewise, with the pair's two devices per workload.
    alone, concurrent, failures = {}, {}, []
    for path in sorted(Path(out).glob("alone-*.json")):
        for r in load(path):
            if ok(r):
                alone.setdefault((key(r), device(r)), []).append(float(r["timing"]["median_ns"]))
    pairs = {}
    for path in sorted(Path(out).glob("concurrent-*.json")):
        workload = path.stem[len("concurrent-"):].rsplit("-", 1)[0]
        results = load(path)
        if not results:
            failures.append(f"{path.name}: no results")
        pairs.setdefault(workload, set()).update(device(r) for r in results)
        for r in results:
            if not ok(r):
                failures.append(f"{path.name}: {r['variant']} {r.get('status')} {r.get('status_message', '')}")
                continue
            concurrent.setdefault((key(r), device(r)), []).append(float(r["timing"]["median_ns"]))
    if not pairs:
        failures.append("no concurrent-*.json results: nothing was measured with both GPUs busy")
    for workload, devs in sorted(pairs.items()):
        if len(devs) != 2:
            failures.append(f"{workload}: the two concurrent jobs ran on {len(devs)} GPU(s), expected 2")
    print("| op | variant | shape | dtype | GPU | alone median (us) | concurrent median (us) | difference | baseline |")
    print("|---|---|---|---|---|---:|---:|---:|---|")
    worst = 0.0
    for (k, dev), meds in sorted(concurrent.items()):
        base = alone.get((k, dev))
        where = "same GPU"
        if base is None:  # this GPU never ran the workload alone: the other GPU's alone run
            others = [m for (k2, _), ms in alone.items() if k2 == k for m in ms]
            base, where = (others, "other GPU") if others else (None, "none")
        if base is None:
            failures.append(f"{' '.join(k)}: no alone result to compare with")
            continue
        a, c = statistics.median(base), statistics.median(meds)
        diff = 100.0 * (c - a) / a
        worst = max(worst, abs(diff))
        mark = "" if abs(diff) <= max_diff else " **over**"
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {dev[:12]} | {a / 1e3:.1f} | {c / 1e3:.1f} | {diff:+.2f}%{mark} | {where} |")
    print()
    verdict = "PASS" if worst <= max_diff and not failures else "FAIL"
    print(f"Largest |difference|: {worst:.2f}% (target <= {max_diff}%): {verdict}")
    for f in failures:
        print(f"- {f}")
    return 0 if verdict == "PASS" else 1


def isolation(out):
    faulty, normal = load(Path(out) / "isolation-faulty.json"), load(Path(out) / "isolation-normal.json")
    print("\n| job | variant | GPU | status | message |")
    print("|---|---|---|---|---|")
    for name, results in (("fault", faulty), ("normal", normal)):
        for r in results:
            msg = r.get("status_message", "").replace("|", "/").replace("\n", " ")[:80]
            print(f"| {name} | {r['variant']} | {device(r)[:12]} | {r.get('status')} | {msg} |")
    bad = [r for r in normal if r.get("status") != "OK"]
    shared = {device(r) for r in normal} & {device(r) for r in faulty}
    good = bool(normal) and not bad and not shared and bool(faulty)
    print(f"\nNormal job: {len(normal)} results, {len(bad)} not OK; GPUs shared with the fault job: "
          f"{len(shared)}: {'PASS' if good else 'FAIL'}")
    return 0 if good else 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--max-diff-pct", type=float, default=2.0)
    p.add_argument("--isolation", action="store_true")
    a = p.parse_args()
    return isolation(a.out) if a.isolation else concurrency(a.out, a.max_diff_pct)


if __name__ == "__main__":
    sys.exit(main())
