#!/usr/bin/env bash
# targets.py's plan against this build's catalog (kbench-bench --check_only: no device needed): every op,
# variant and shape the targets name must be known, so that a GPU run does not find out.
#   tests/gpu/targets_plan_check.sh KBENCH_BENCH
set -euo pipefail
bench=${1:?usage: targets_plan_check.sh KBENCH_BENCH}
here=$(cd "$(dirname "$0")" && pwd)
n=0
while IFS=$'\t' read -r op variants shapes; do
  "$bench" --check_only --op "$op" --variant "$variants" --shape "$shapes" >/dev/null
  n=$((n + 1))
done < <(python3 "$here/targets.py" plan)
((n > 0)) || { echo "targets.py plan gave nothing" >&2; exit 1; }
echo "targets.py plan: $n ops, every variant and shape known"
