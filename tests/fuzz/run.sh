#!/usr/bin/env bash
# Runs every libFuzzer target in DIR (build-fuzz/fuzz, from `make fuzz`) for SECONDS each, on a copy
# of its corpus (tests/fuzz/corpus/NAME, never modified here) with its dictionary (dict/NAME.dict) when
# there is one. Exits 1 when any target crashes, leaks, hangs on one input (-timeout) or runs out of
# memory, after printing the report, the reproducer (kept under DIR/crashes/) and the command that
# replays it.
#   usage: tests/fuzz/run.sh DIR [SECONDS]
# Environment: FUZZ_TARGETS="validate framing" runs only those; FUZZ_SEED sets libFuzzer's seed
# (default: from the checked-out commit, so that a CI run is repeatable on the same commit and each
# commit explores differently). The machine's speed changes how far a run gets, never its verdict on
# a correct parser: the per-input limit (25 s) is thousands of times any input's normal time.
set -uo pipefail

if [[ $# -lt 1 || ! -d $1 ]]; then
  echo "usage: $0 DIR [SECONDS]   (DIR: the fuzz binaries, e.g. build-fuzz/fuzz)" >&2
  exit 2
fi
dir=$(cd "$1" && pwd)
seconds=${2:-30}
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "fuzz: SECONDS must be a whole number >= 1 (libFuzzer reads 0 as no limit), got '$seconds'" >&2
  exit 2
fi
src=$(cd "$(dirname "$0")" && pwd)
seed=${FUZZ_SEED:-$(( 0x$(git -C "$src" rev-parse --short=7 HEAD 2>/dev/null || echo 1) ))}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shopt -s nullglob
bins=()
if [[ -n ${FUZZ_TARGETS:-} ]]; then
  for t in $FUZZ_TARGETS; do bins+=("$dir/fuzz_$t"); done
else
  bins=("$dir"/fuzz_*)
fi
if ((${#bins[@]} == 0)); then
  echo "fuzz: no fuzz_* binaries in $dir" >&2
  exit 1
fi

failed=()
for bin in "${bins[@]}"; do
  name=${bin##*/fuzz_}
  if [[ ! -x $bin ]]; then
    echo "fuzz: no target $bin" >&2
    failed+=("$name")
    continue
  fi
  corpus=$work/$name/corpus
  artifacts=$work/$name/artifacts/
  mkdir -p "$corpus" "$artifacts"
  seeds=("$src/corpus/$name"/*)
  if ((${#seeds[@]} == 0)); then
    echo "fuzz: $name has no seed corpus in tests/fuzz/corpus/$name" >&2
    failed+=("$name")
    continue
  fi
  cp "${seeds[@]}" "$corpus"/
  args=(-max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -seed="$seed" -print_final_stats=1
        -artifact_prefix="$artifacts")
  [[ -f $src/dict/$name.dict ]] && args+=(-dict="$src/dict/$name.dict")
  log=$work/$name/log
  start=$SECONDS
  "$bin" "${args[@]}" "$corpus" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  if ((rc == 0)); then
    echo "fuzz: $name: ${runs:-?} runs in $((SECONDS - start)) s, ${cov:-cov: ?}, $(ls "$corpus" | wc -l) corpus inputs; no crash"
    continue
  fi
  failed+=("$name")
  echo "fuzz: $name FAILED (exit $rc); its report:" >&2
  # From the first line of the report (sanitizer, FUZZ_CHECK, timeout, out of memory) on.
  awk '/ERROR|runtime error|FUZZ_CHECK|ALARM|out-of-memory/ { on = 1 } on' "$log" | grep -v '^ *0x[0-9a-f]*: ' |
    head -n 80 >&2
  mkdir -p "$dir/crashes"
  for a in "$artifacts"*; do
    kept=$dir/crashes/$name-${a##*/}
    cp "$a" "$kept"
    echo "fuzz: reproducer $kept ($(stat -c %s "$a") bytes); replay: $bin $kept" >&2
    echo "fuzz: its bytes (base64): $(head -c 4096 "$a" | base64 -w0)" >&2
  done
done

if ((${#failed[@]} > 0)); then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#bins[@]} targets, ${seconds} s each (seed $seed): no crash"
