#!/usr/bin/env bash
# The harness checks of issue 20 on a GPU host, inside 120 s: ceilings per traffic mix and unit,
# vector_add / reduce_sum / GEMV against their own mix's ceiling, the write-back of a COLD sample,
# the event-window probe, and three kernels of 30-300 us against Nsight Compute's
# gpu__time_duration (write-back taken out first). Run from an unpacked bundle: bash run.sh
set -u
here=$(pwd)
out=${OUT_DIR:-$here/harness-out}
mkdir -p "$out"
export KBENCH_REQUIRE_GPU=1 KBENCH_CALIBRATION_CACHE=$out/calibration.txt
cal=$KBENCH_CALIBRATION_CACHE
status=0
step() { echo; echo "== $* (t=${SECONDS}s)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv,noheader 2>/dev/null

step "harness_gpu_test"
timeout 70 tests/harness_gpu_test --gtest_filter='HarnessGpuTest.Ceilings*:HarnessGpuTest.MemoryBound*:HarnessGpuTest.Hot*:HarnessGpuTest.EventWindowProbe' || status=1

ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for spec in "layernorm cuda_v3_pipelined 8192x4096 LayernormV3" "rmsnorm cuda_v7_cp_async_ring 32768x4096 RmsnormV6" \
  "softmax cuda_v6_one_barrier 32768x4096 SoftmaxV6"; do
  read -r op variant shape kernel <<<"$spec"
  ((SECONDS > 92)) && { echo "out of time before $op"; status=1; break; }
  step "timing $op $variant $shape"
  timeout 15 tests/kbench-bench --op "$op" --variant "$variant" --shape "$shape" --dtype bf16 --trials 1 --max_time_ms 300 \
    --calibration_cache "$cal" --json "$out/timing-$op-$variant.jsonl" || status=1
  [[ -n $ncu ]] && timeout 20 "$ncu" --clock-control none --cache-control all --metrics gpu__time_duration.sum \
    -k "regex:$kernel" --launch-skip 3 --launch-count 10 --csv \
    tests/kbench-bench --op "$op" --variant "$variant" --shape "$shape" --dtype bf16 --trials 1 --max_time_ms 50 \
    --calibration_cache "$cal" >"$out/ncu-$op-$variant.csv" 2>"$out/ncu-$op-$variant.err"
done
[[ -n $ncu ]] || echo "no ncu found"
python3 - "$out" <<'PY'
import csv, json, statistics, sys
from pathlib import Path
out = Path(sys.argv[1])
for f in sorted(out.glob("timing-*.jsonl")):
    key = f.stem[len("timing-"):]
    rs = [json.loads(l) for l in f.read_text().splitlines() if l.strip()]
    rs = [r for r in rs if r.get("status") == "OK"]
    vals = []
    p = out / f"ncu-{key}.csv"
    if p.exists():
        lines = [l for l in p.read_text().splitlines() if l.startswith('"')]
        for row in csv.DictReader(lines):
            if row.get("Metric Name") == "gpu__time_duration.sum":
                scale = {"nsecond": 1, "ns": 1, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6}.get(row.get("Metric Unit"), 1)
                vals.append(float(row["Metric Value"].replace(",", "")) * scale)
    if not rs:
        print(key, "no harness result"); continue
    t = rs[-1]["timing"]
    med, wb, off = float(t["median_ns"]), float(t.get("write_back_ns", 0)), float(t.get("window_offset_ns", 0))
    ncu = statistics.median(vals) if vals else None
    line = f"{key}: harness {med/1e3:.2f} us (window offset {off:.0f} ns subtracted), write-back {wb/1e3:.2f} us, kernel-only {(med-wb)/1e3:.2f} us"
    if ncu:
        line += f"; ncu {ncu/1e3:.2f} us (n={len(vals)}): kernel-only {100*(med-wb-ncu)/ncu:+.2f}%, before subtracting {100*(med-wb+off-ncu)/ncu:+.2f}%"
    print(line)
PY
summarize() {
  python3 -c '
import csv, sys, statistics, collections
rows = [l for l in sys.stdin.read().splitlines() if l.startswith("\"")]
by = collections.defaultdict(list)
for r in csv.DictReader(rows):
    if r.get("Metric Name") == "gpu__time_duration.sum":
        s = {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(r.get("Metric Unit"), 1)
        v = float(r["Metric Value"].replace(",", "")) * s
        by[(r["Kernel Name"].split("(")[0][-24:], r.get("Grid Size", ""), round(v / 5000) * 5)].append(v)
for k in sorted(by):
    v = by[k]
    print("ncu", k[0], "grid", k[1], "~%d us:" % k[2], "n=%d median %.0f ns min %.0f max %.0f" % (len(v), statistics.median(v), min(v), max(v)))
'
}
if [[ -n $ncu ]] && ((SECONDS < 90)); then
  step "ncu on the event-window probe kernels"
  timeout $((117 - SECONDS)) "$ncu" --clock-control none --metrics gpu__time_duration.sum -k "regex:TimedSpin|EmptyKernel" \
    --launch-count 400 --csv tests/harness_gpu_test --gtest_filter=HarnessGpuTest.EventWindowProbe 2>/dev/null | summarize
fi
echo; echo "exit status $status (t=${SECONDS}s)"
exit $status
