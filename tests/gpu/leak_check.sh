#!/usr/bin/env bash
# On a GPU host, through the whole path as an attacker would use it: custom CUDA sources that try to
# include the worker's files must come back refused, holding no byte of them.
#
#   tests/gpu/leak_check.sh BUNDLE OUT
#
# The coordinator requires tokens; the CUDA worker holds its worker token in KBENCH_TOKEN (and a
# second secret-looking variable), as a deployed worker does; the client submits with a submit-role
# token. Each source below is submitted as a custom vector_add kernel. Passes when every result is
# COMPILE_ERROR naming the offending line, and neither secret nor any line of /etc/passwd appears in
# anything the client receives (results JSON and table). Exit status 0 pass, 1 fail.
set -uo pipefail
bundle=${1:?usage: leak_check.sh BUNDLE OUT}
out=${2:?usage: leak_check.sh BUNDLE OUT}
bundle=$(cd "$bundle" && pwd) || exit 1
bin=$bundle/bin
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/leak"
out=$(cd "$out" && pwd)
cd "$out/leak" || exit 1
source "$here/lib.sh"

rand() { head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 24; }
worker_token="wkr$(rand)"
submit_token="sub$(rand)"
other_secret="cloudsecret$(rand)"
printf '%s worker leak-worker\n%s submit leak-user\n' "$worker_token" "$submit_token" >tokens.txt

"$bin/kbench-coordinator" --listen 127.0.0.1:0 --db leak.db --metrics-listen "" --token-file tokens.txt \
  >coordinator.log 2>&1 &
pids+=($!)
addr=$(wait_line coordinator.log "listening on" 30) || { echo "leak_check: coordinator did not start"; cat coordinator.log; exit 1; }
KBENCH_TOKEN=$worker_token CLOUD_SECRET_ACCESS_KEY=$other_secret "$bin/kbench-worker" --coordinator "$addr" \
  --backend cuda --calibration-cache "${KBENCH_CALIBRATION:-/tmp/kbench-calibration.txt}" >worker.log 2>&1 &
worker_pid=$!
pids+=($worker_pid)
wait_line worker.log "registered as" 300 >/dev/null || { echo "leak_check: worker did not register"; cat worker.log; exit 1; }

# name|the line the refusal must name|source (\n as a line break)
cases=(
  'environ|1|#include "/proc/self/environ"\n'
  'environ_angle|1|#include </proc/self/environ>\n'
  'worker_environ|1|#include "/proc/'"$worker_pid"'/environ"\n'
  'passwd|2|extern "C" __global__ void kbench_vector_add() {}\n#include "/etc/passwd"\n'
  'computed|2|#define F "/proc/self/environ"\n#include F\n'
  'spliced|1|#inc\\\nlude "/etc/passwd"\n'
  'relative|1|#include "../../../../../../proc/self/environ"\n'
)
status=0
for c in "${cases[@]}"; do
  IFS='|' read -r name line source <<<"$c"
  printf "$source" >"$name.cu"
  id=$(KBENCH_TOKEN=$submit_token "$bin/kbench-client" --coordinator "$addr" submit --op vector_add \
    --source "$name.cu" --shape N=4096 --dtype f32 2>"$name.submit.err") ||
    { echo "leak_check: $name: submit failed: $(cat "$name.submit.err")"; status=1; continue; }
  deadline=$((SECONDS + 180))
  until KBENCH_TOKEN=$submit_token "$bin/kbench-client" --coordinator "$addr" status "$id" 2>/dev/null |
    grep -qE 'SUCCEEDED|FAILED|CANCELLED'; do
    ((SECONDS > deadline)) && { echo "leak_check: $name: job $id not done in 180 s"; status=1; continue 2; }
    sleep 1
  done
  KBENCH_TOKEN=$submit_token "$bin/kbench-client" --coordinator "$addr" results "$id" --format json >"$name.json"
  KBENCH_TOKEN=$submit_token "$bin/kbench-client" --coordinator "$addr" results "$id" >"$name.txt"
  python3 - "$name" "$name.json" "$line" <<'PY' || status=1
import json, sys
name, path, line = sys.argv[1], sys.argv[2], sys.argv[3]
custom = [r for r in json.load(open(path)) if r.get("variant", "").startswith("custom:")]
bad = [r for r in custom if r.get("status") != "COMPILE_ERROR" or f"{name}.cu({line}): error" not in r.get("status_message", "")]
if not custom or bad:
    print(f"leak_check: {name}: expected COMPILE_ERROR naming line {line}, got",
          [(r.get("status"), r.get("status_message", "")[:200]) for r in (bad or custom)] or "no custom result")
    sys.exit(1)
print(f"leak_check: {name}: COMPILE_ERROR: {custom[0]['status_message'][:160]!r}")
PY
  for secret in "$worker_token" "$submit_token" "$other_secret" "root:x:0:0" "KBENCH_TOKEN=" "PATH=/"; do
    if grep -qF -- "$secret" "$name.json" "$name.txt"; then
      echo "leak_check: $name: LEAKED '${secret:0:12}...' to the client"
      status=1
    fi
  done
done
echo "leak_check: $([[ $status == 0 ]] && echo passed || echo FAILED) (${#cases[@]} sources)"
exit $status
