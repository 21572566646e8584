#!/usr/bin/env bash
# Every gpu-labelled test program of a bundle (deploy/bundle.sh), on a GPU host, in one call: the
# programs whose tests time things run first, one at a time, on an otherwise idle GPU; the
# correctness programs (most of their time is their CPU references) then run PARALLEL at a time.
# A program fails when it exits non-zero, or when its GoogleTest report has a failure, a skipped
# test or no test (check_results.py gtest: on a GPU host nothing may skip). Prints each program's
# wall time and, last, the failed ones; exits 1 when any failed.
#
#   tests/gpu/run-gpu-tests.sh [-b BUNDLE] [-o OUT] [-j PARALLEL] [-t TIMEOUT_S] [PROGRAM...]
#   PROGRAM: a test program's name (e.g. qgemm_gpu_test; default: every *_gpu_test and gemm_sass_test).
#   GTEST_FILTER in the environment narrows every program's tests as GoogleTest does.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bundle=$repo/.bundle out=${OUT:-$repo/gpu-out} parallel=4 limit=540
while getopts "b:o:j:t:h" opt; do
  case $opt in
    b) bundle=$OPTARG ;;
    o) out=$OPTARG ;;
    j) parallel=$OPTARG ;;
    t) limit=$OPTARG ;;
    h) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [-b BUNDLE] [-o OUT] [-j PARALLEL] [-t TIMEOUT_S] [PROGRAM...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ -d $bundle/tests ]] || { echo "no bundle at $bundle (deploy/bundle.sh BUILD_DIR $bundle)" >&2; exit 2; }
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KBENCH_REQUIRE_GPU=1 KBENCH_RUNNER=$bundle/bin/kbench-runner
export KBENCH_CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
export KBENCH_KERNELS_LIB=$bundle/lib/libkbench_kernels.so

# Programs whose tests compare times (ceilings, A/B verdicts, resources): alone on the GPU.
timed=(harness_gpu_test plugin_ab_gpu_test resources_gpu_test)
if (($# > 0)); then
  programs=("$@")
else
  programs=()
  for t in "$bundle"/tests/*_gpu_test "$bundle"/tests/gemm_sass_test; do [[ -x $t ]] && programs+=("$(basename "$t")"); done
fi

# run_one NAME: runs one program, writes OUT/NAME.{log,xml,rc,secs}.
run_one() {
  local name=$1 t0 rc
  t0=$(date +%s)
  timeout "$limit" "$bundle/tests/$name" --gtest_brief=1 --gtest_output="xml:$out/$name.xml" >"$out/$name.log" 2>&1
  rc=$?
  echo "$rc" >"$out/$name.rc"
  echo $(($(date +%s) - t0)) >"$out/$name.secs"
}
export -f run_one
export bundle out limit

serial=() rest=()
for p in "${programs[@]}"; do
  [[ -x $bundle/tests/$p ]] || { echo "no test program $p in $bundle/tests" >&2; exit 2; }
  if [[ " ${timed[*]} " == *" $p "* ]]; then serial+=("$p"); else rest+=("$p"); fi
done
for p in "${serial[@]}"; do run_one "$p"; done
((${#rest[@]} > 0)) && printf '%s\n' "${rest[@]}" | xargs -P "$parallel" -I{} bash -c 'run_one {}'

failed=()
for p in "${serial[@]}" "${rest[@]}"; do
  rc=$(cat "$out/$p.rc" 2>/dev/null || echo "?")
  why=""
  [[ $rc == 0 ]] || why="exited $rc"
  report=$(python3 "$here/check_results.py" gtest "$out/$p.xml" 2>&1) || why="${why:+$why; }$(echo "$report" | head -3 | tr '\n' ' ')"
  tests=$(grep -o 'tests="[0-9]*"' "$out/$p.xml" 2>/dev/null | head -1 | tr -dc 0-9)
  printf '%-28s %5ss  %4s tests  %s\n' "$p" "$(cat "$out/$p.secs" 2>/dev/null)" "${tests:-?}" "${why:-ok}"
  [[ -n $why ]] && { failed+=("$p"); tail -15 "$out/$p.log"; }
done
((${#failed[@]} == 0)) || { echo "FAILED: ${failed[*]}"; exit 1; }
echo "all ${#programs[@]} test programs passed"
