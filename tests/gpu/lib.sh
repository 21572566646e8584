# Shared by the GPU-host scripts (run-on-gpu.sh, run-multi-gpu.sh): background processes killed on
# exit, and waiting for a line in a log. Sourced, not run.

pids=()  # background processes (coordinator, workers) to kill when the script exits
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

wait_line() {  # FILE PATTERN SECONDS -> last word of the matching line; fails past SECONDS of wall time
  local deadline=$((SECONDS + $3)) l
  while ((SECONDS < deadline)); do
    if l=$(grep -m1 "$2" "$1" 2>/dev/null); then echo "${l##* }"; return 0; fi
    sleep 0.1
  done
  return 1
}
