#!/usr/bin/env bash
# `make run`: an embedded coordinator (SQLite in a temporary folder) and one local worker (CUDA when a
# GPU is visible, otherwise the CPU backend), then the default suite through kbench-client.
# Usage: scripts/run-local.sh [BUILD_DIR] [extra kbench-client submit flags...]
set -euo pipefail
build=${1:-build}
shift || true
bin="$build/bin"
for b in kbench-coordinator kbench-worker kbench-client; do
  [[ -x "$bin/$b" ]] || { echo "run-local: $bin/$b not built (run 'make build')" >&2; exit 1; }
done

tmp=$(mktemp -d -t kbench-run.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# Waits until FILE has a line matching PATTERN, printing its last field; fails after a time limit.
wait_for_line() {
  local file=$1 pattern=$2 what=$3 limit=${4:-120}
  for ((i = 0; i < limit * 10; i++)); do
    if line=$(grep -m1 "$pattern" "$file" 2>/dev/null); then
      echo "${line##* }"
      return 0
    fi
    sleep 0.1
  done
  echo "run-local: $what did not start; its log:" >&2
  cat "$file" >&2
  return 1
}

"$bin/kbench-coordinator" --listen 127.0.0.1:0 --db "$tmp/kbench.db" --metrics-listen 127.0.0.1:0 \
  >"$tmp/coordinator.log" 2>&1 &
pids+=($!)
addr=$(wait_for_line "$tmp/coordinator.log" "kbench-coordinator listening on" coordinator)
echo "coordinator  $addr  (SQLite in $tmp)"

backend=cpu
if scripts/have-gpu.sh; then backend=auto; fi
"$bin/kbench-worker" --coordinator "$addr" --listen 127.0.0.1:0 --backend "$backend" \
  --calibration-cache "$tmp/calibration" >"$tmp/worker.log" 2>&1 &
pids+=($!)
echo "worker       calibrating the $backend backend (memory bandwidth, FMA/GEMM peak)..."
wid=$(wait_for_line "$tmp/worker.log" "kbench-worker registered as" worker 300)
echo "worker       $wid"
echo

"$bin/kbench-client" --coordinator "$addr" workers
echo
"$bin/kbench-client" --coordinator "$addr" submit --suite default --wait --max-time-ms 500 "$@"
