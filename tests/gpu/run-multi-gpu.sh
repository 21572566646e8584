#!/usr/bin/env bash
# On a host with two (or more) GPUs, from a prebuilt bundle (deploy/bundle.sh): ONE kbench-worker
# with --devices all (one kbench-runner child per GPU, each calibrated and registered by its uuid)
# under one coordinator, then
#   1. each workload alone (the other GPU idle), then the same workload submitted twice at once so
#      both GPUs run it; a table of the medians alone vs concurrent and their difference (target:
#      within 2%) -> OUT/multi-gpu.md;
#   2. a fault (cuda_oob_write) and a hang (cuda_hang) on one GPU while the other GPU runs a normal
#      job: the normal job's results must all be OK.
#
#   tests/gpu/run-multi-gpu.sh [-b BUNDLE] [-o OUT] [PHASE...]
#   phases: concurrency isolation   (default: both)
#   MAX_DIFF_PCT (default 2) is the pass mark; ALONE_RUNS (default 2) runs each workload alone that
#   many times so that, most often, both GPUs have an alone baseline of their own.
set -uo pipefail
# No NVLink multicast: it is not needed here and some hosts' fabric managers refuse it.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bundle=$repo/.bundle
out=${OUT:-$repo/gpu-multi-out}
while getopts "b:o:" opt; do
  case $opt in
    b) bundle=$OPTARG ;;
    o) out=$OPTARG ;;
    *) echo "usage: $0 [-b BUNDLE] [-o OUT] [PHASE...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
phases=${*:-concurrency isolation}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [[ ! -e /usr/local/cuda/lib64/libcublas.so.13 ]]; then
  d=$(dirname "$(find /usr /opt -name 'libcublas.so.13' 2>/dev/null | head -1)" 2>/dev/null)
  [[ -n $d && $d != . ]] && export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
fi
cal=${KBENCH_CALIBRATION:-/tmp/kbench-calibration.txt}  # .<gpu uuid> is appended per GPU
bin=$bundle/bin
client=("$bin/kbench-client")
status=0
log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$out/run.log"; }

nvidia-smi --query-gpu=index,name,uuid,memory.total,clocks.sm,clocks.max.sm,temperature.gpu --format=csv \
  >"$out/nvidia-smi.csv" 2>&1
gpus=$(($(wc -l <"$out/nvidia-smi.csv") - 1))
log "GPUs: $gpus"
cat "$out/nvidia-smi.csv" >>"$out/run.log"
if ((gpus < 2)); then log "this script needs at least two GPUs"; exit 2; fi

# pids, cleanup on exit, wait_line
source "$here/lib.sh"

"$bin/kbench-coordinator" --listen 127.0.0.1:0 --db "$out/kbench.db" --metrics-listen "" >"$out/coordinator.log" 2>&1 &
pids+=($!)
addr=$(wait_line "$out/coordinator.log" "listening on" 30) || { log "coordinator failed"; cat "$out/coordinator.log"; exit 1; }
client+=(--coordinator "$addr")
"$bin/kbench-worker" --coordinator "$addr" --backend cuda --devices all \
  --calibration-cache "$cal" >"$out/worker.log" 2>&1 &
pids+=($!)
wid=$(wait_line "$out/worker.log" "registered as" 600) || { log "worker failed"; cat "$out/worker.log"; exit 1; }
log "cluster: coordinator $addr, worker $wid"
"${client[@]}" workers | tee -a "$out/run.log"
devices=$("${client[@]}" workers --format csv | grep -c "^$wid,")
if ((devices < 2)); then log "the worker registered $devices device(s), expected $gpus"; exit 1; fi

# submit ARGS... -> job id
submit() { "${client[@]}" submit "$@"; }
# wait_job ID: until it has finished; its state on stdout.
wait_job() {
  local st
  while :; do
    st=$("${client[@]}" status "$1" 2>/dev/null)
    [[ $st == *SUCCEEDED* || $st == *FAILED* || $st == *CANCELLED* ]] && break
    sleep 1
  done
  echo "$st"
}
# save NAME ID: results as JSON (the table's input) and as a table in the log.
save() {
  "${client[@]}" results "$2" --format json >"$out/$1.json"
  "${client[@]}" results "$2" | tee -a "$out/run.log" >/dev/null
}

# The workloads: the memory-bound canonical problems and the canonical bf16 GEMM.
common=(--dtype bf16 --trials 3 --max-time-ms 1000)
declare -A workload=(
  [vector_add]="--op vector_add --shape N=268435456 ${common[*]}"
  [rmsnorm]="--op rmsnorm --shape 32768x4096 ${common[*]}"
  [softmax]="--op softmax --shape 32768x4096 ${common[*]}"
  [layernorm]="--op layernorm --shape 32768x4096 ${common[*]}"
  [gemm_bf16]="--op gemm --preset canonical --dtype bf16 --trials 3 --max-time-ms 600 --warmup-ms 20 --variant cuda_wgmma_tma,cublas_bf16"
)
order=(vector_add rmsnorm softmax layernorm gemm_bf16)

for phase in $phases; do
  case $phase in
    concurrency)
      for name in "${order[@]}"; do
        read -r -a args <<<"${workload[$name]}"
        for ((k = 1; k <= ${ALONE_RUNS:-2}; k++)); do
          log "alone $name ($k)"
          id=$(submit "${args[@]}") || { log "submit failed"; status=1; continue; }
          st=$(wait_job "$id"); [[ $st == *SUCCEEDED* ]] || { log "alone $name: $st"; status=1; }
          save "alone-$name-$k" "$id"
        done
        log "concurrent $name: two jobs at once, one per GPU"
        a=$(submit "${args[@]}") && b=$(submit "${args[@]}") || { log "submit failed"; status=1; continue; }
        for pair in "1 $a" "2 $b"; do
          read -r k id <<<"$pair"
          st=$(wait_job "$id"); [[ $st == *SUCCEEDED* ]] || { log "concurrent $name: $st"; status=1; }
          save "concurrent-$name-$k" "$id"
        done
      done
      python3 "$here/multi_gpu_compare.py" "$out" --max-diff-pct "${MAX_DIFF_PCT:-2}" | tee "$out/multi-gpu.md" |
        tee -a "$out/run.log"
      [[ ${PIPESTATUS[0]} == 0 ]] || status=1
      ;;
    isolation)
      # A long normal job first, so that it holds one GPU; the faults then land on the other.
      log "isolation: a normal job on one GPU, a fault and a hang on the other"
      normal=$(submit --op rmsnorm --shape 32768x4096 --dtype bf16 --min-time-ms 3000 --max-time-ms 3000) ||
        { log "submit failed"; status=1; continue; }
      until "${client[@]}" status "$normal" 2>/dev/null | grep -q RUNNING; do sleep 0.2; done
      # The fault-injection op comes with the job: the test kernel library (kernels/testing/) as its plugin.
      faulty=$(submit --op fault_injection --plugin "$bundle/tests/libkbench_test_kernels.so" --preset small --dtype f32 --timeout-ms 5000 --max-time-ms 200 \
        --variant cuda_oob_write,cuda_hang,cuda_ok) || status=1
      st=$(wait_job "$faulty"); log "fault job: $st"
      save isolation-faulty "$faulty"
      st=$(wait_job "$normal"); log "normal job: $st"
      save isolation-normal "$normal"
      python3 "$here/multi_gpu_compare.py" "$out" --isolation | tee -a "$out/multi-gpu.md" | tee -a "$out/run.log"
      [[ ${PIPESTATUS[0]} == 0 ]] || status=1
      ;;
    *) log "unknown phase $phase"; status=2 ;;
  esac
done
log "done, status $status"
exit $status
