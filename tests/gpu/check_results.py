#!/usr/bin/env python3
"""The pass/fail checks of a GPU run (tests/gpu/run-on-gpu.sh): each exits 1, saying why, when
what the run produced is not what it must be, and 0 otherwise.

  check_results.py statuses FILE.json EXPECT
      FILE.json: `kbench-client results --format json`. EXPECT is a comma-separated list of
      VARIANT=STATUS (the variant has results, all with that status) and at most one bare STATUS,
      the status of every other variant's results (without one, no other variant may have any):
      "OK", "OK,cuda_v4_warp_row=SKIPPED", "cuda_ok=OK,cuda_hang=TIMEOUT". An empty file or no
      result at all is a failure.
  check_results.py gtest FILE.xml
      A GoogleTest XML report: a failure, an error, a skipped test or no test at all is a failure
      (on a GPU host nothing may skip).
  check_results.py timing OUT MAX_DIFF
      Each OUT/timing-OP-VARIANT.jsonl (kbench-bench) against its OUT/ncu-OP-VARIANT.csv (Nsight
      Compute's gpu__time_duration): both medians present and |harness - ncu| / ncu <= MAX_DIFF,
      the harness's median less the write-back it includes (ncu's window ends with the kernel).
"""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tables import kernel_only_ns, load, ncu_median_ns  # noqa: E402  (same folder)


def statuses(path, expect):
    try:
        results = load(path)
    except ValueError as e:
        return [f"{path}: not JSON results: {str(e)[:80]}"]
    results = [r for r in results if isinstance(r, dict)]
    if not results:
        return [f"{path}: no results"]
    want, default = {}, None
    for item in expect.split(","):
        if "=" in item:
            variant, status = item.split("=", 1)
            want[variant] = status
        else:
            default = item
    errors, seen = [], set()
    for r in results:
        v, got = r.get("variant"), r.get("status")
        seen.add(v)
        expected = want.get(v, default)
        if expected is None:
            errors.append(f"{path}: unexpected variant {v} ({got})")
        elif got != expected:
            message = (r.get("status_message") or "").splitlines()
            errors.append(f"{path}: {v} #{r.get('index', 0)}: {got}, expected {expected}"
                          + (f" ({message[0][:120]})" if message else ""))
    for v in sorted(set(want) - seen):
        errors.append(f"{path}: no result for {v} (expected {want[v]})")
    return errors


def gtest(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        return [f"{path}: no readable GoogleTest report: {str(e)[:120]}"]
    cases = root.findall(".//testcase")
    if not cases:
        return [f"{path}: no test ran"]
    errors = []
    for c in cases:
        name = f"{c.get('classname')}.{c.get('name')}"
        if c.find("failure") is not None or c.find("error") is not None:
            errors.append(f"{path}: {name} failed")
        elif c.get("result") == "skipped" or c.find("skipped") is not None:
            errors.append(f"{path}: {name} skipped (a failure on a GPU host)")
    return errors


def timing(out, max_diff):
    files = sorted(Path(out).glob("timing-*.jsonl"))
    if not files:
        return [f"{out}: no timing-*.jsonl"]
    errors = []
    for path in files:
        key = path.stem[len("timing-"):]
        ok = [r for r in load(path) if r.get("status") == "OK"]
        ncu, n = ncu_median_ns(Path(out) / f"ncu-{key}.csv")
        if not ok:
            errors.append(f"{key}: no OK harness result in {path.name}")
        elif ncu is None:
            errors.append(f"{key}: no Nsight Compute median (ncu-{key}.csv missing or empty: is ncu installed?)")
        else:
            h = kernel_only_ns(ok[-1])
            diff = (h - ncu) / ncu
            line = f"{key}: harness kernel-only {h / 1e3:.2f} us, ncu {ncu / 1e3:.2f} us ({n} launches): {100 * diff:+.2f}%"
            if abs(diff) > max_diff:
                errors.append(f"{line}, beyond the {100 * max_diff:.1f}% bound")
            else:
                print(line)
    return errors


def main(argv):
    if len(argv) == 3 and argv[0] == "statuses":
        errors = statuses(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "gtest":
        errors = gtest(argv[1])
    elif len(argv) == 3 and argv[0] == "timing":
        errors = timing(argv[1], float(argv[2]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for e in errors:
        print(f"FAIL: {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
