#!/usr/bin/env bash
# Runs every libFuzzer target in DIR (build-fuzz/fuzz, from `make fuzz`) for SECONDS each, on a copy
# of its corpus (tests/fuzz/corpus/NAME, never modified here) with its dictionary (dict/NAME.dict) when
# there is one. Exits 1 when any target crashes, leaks, times out (-timeout) or runs out of memory,
# after printing the report, the reproducer (kept under DIR/crashes/) and the command that replays it.
#   usage: tests/fuzz/run.sh DIR [SECONDS]
set -uo pipefail

if [[ $# -lt 1 || ! -d $1 ]]; then
  echo "usage: $0 DIR [SECONDS]   (DIR: the fuzz binaries, e.g. build-fuzz/fuzz)" >&2
  exit 2
fi
dir=$(cd "$1" && pwd)
seconds=${2:-30}
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shopt -s nullglob
bins=("$dir"/fuzz_*)
if ((${#bins[@]} == 0)); then
  echo "fuzz: no fuzz_* binaries in $dir" >&2
  exit 1
fi

failed=()
for bin in "${bins[@]}"; do
  name=${bin##*/fuzz_}
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
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
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
  grep -v '^#[0-9]' "$log" | tail -n 60 >&2
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
echo "fuzz: ${#bins[@]} targets, ${seconds} s each: no crash"
