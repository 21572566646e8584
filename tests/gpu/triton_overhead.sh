#!/usr/bin/env bash
# What a Triton rung adds to a job (worker/triton/README.md): triton_overhead_bench twice with one
# fresh kernel cache, so the first run compiles (cold) and the second, a new runner, finds every
# cubin in the cache (warm). Usage: tests/gpu/triton_overhead.sh [BENCH_BINARY] [--ops rmsnorm,gemm,attention]
set -euo pipefail
bench=${1:-$(dirname "$0")/triton_overhead_bench}
shift || true
cache=$(mktemp -d /tmp/kbench-triton-overhead.XXXXXX)
trap 'rm -rf "$cache"' EXIT
echo "== run 1: empty kernel cache ($cache)"
KBENCH_KERNEL_CACHE=$cache "$bench" "$@"
echo "== run 2: a new runner, the same cache"
KBENCH_KERNEL_CACHE=$cache "$bench" "$@"
