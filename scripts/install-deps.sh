#!/usr/bin/env bash
# Installs, from Debian's packages, whatever the build and the tests need and is not there yet.
# Idempotent and quiet when everything is present. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake make pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev prometheus-cpp-dev libsqlite3-dev sqlite3 libpq-dev
  libgtest-dev libgmock-dev
  python3 procps
  postgresql  # Server binaries (initdb, pg_ctl) for the PostgreSQL store tests, which start their own server.
  prometheus python3-yaml systemd  # deploy/ checks: promtool and a Prometheus server, YAML, systemd-analyze.
  clang libclang-rt-dev llvm  # make fuzz: libFuzzer and the sanitizer runtimes; llvm-symbolizer for their reports.
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
