#!/usr/bin/env bash
# Installs, from Debian's packages, whatever the build and the tests need and is not there yet.
# Idempotent and quiet when everything is present. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake make pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev prometheus-cpp-dev libsqlite3-dev sqlite3 libpq-dev
  libgtest-dev libgmock-dev
  python3 python3-venv python3-pip procps  # venv and pip: Triton's private environment (below)
  postgresql  # Server binaries (initdb, pg_ctl) for the PostgreSQL store tests, which start their own server.
  prometheus python3-yaml systemd  # deploy/ checks: promtool and a Prometheus server, YAML, systemd-analyze.
  clang libclang-rt-dev llvm  # make fuzz: libFuzzer and the sanitizer runtimes; llvm-symbolizer for their reports.
)
# `kubectl kustomize` for the deploy/k8s check; Debian's kubectl, unless one is installed already
# (another package's /usr/bin/kubectl would conflict with it).
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)

# cuobjdump and the nvdisasm it runs, for the GEMM SASS test of CUDA builds
# (tests/unit/kernels/gemm_sass_test.cc), which fails without them: some CUDA toolkits come without
# them (the pip wheels ship only nvcc). Installed from the Python packages of the same CUDA major
# version, linked beside nvcc where CMake and cuobjdump look for them.
install_cuda_tool() {  # TOOL PYTHON-PACKAGE
  local nvcc bin major dir
  nvcc=$(command -v nvcc || true)
  [[ -z $nvcc && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
  [[ -n $nvcc ]] || return 0
  bin=$(dirname "$(readlink -f "$nvcc")")
  [[ -x $bin/$1 ]] && return 0
  major=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
  [[ -n $major ]] || { echo "install-deps: cannot read nvcc's CUDA version" >&2; return 1; }
  dir=/opt/kbench-tools/$1-cu$major
  echo "install-deps: installing $1 (CUDA $major) into $dir" >&2
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$dir" \
    "$2>=$major,<$((major + 1))"
  ln -sf "$(find "$dir" -type f -name "$1" | head -1)" "$bin/$1"
  "$bin/$1" --version >/dev/null
}
install_cuda_tool cuobjdump nvidia-cuda-cuobjdump
install_cuda_tool nvdisasm nvidia-cuda-nvdisasm

# Triton (Python), for the Triton compile tests (tests/unit/triton): they compile kernels for an
# explicit sm_90 target, which needs no GPU. The worker itself does not need it to build or start.
# Into python3 where pip may install there; Debian's own python3 is externally managed (PEP 668),
# so there it goes into a private environment, $triton_env, which the tests' CMake passes on as
# KBENCH_PYTHON. Without a package index the Triton tests skip, saying why; nothing else needs it.
triton_env=/opt/kbench-tools/python
install_triton() {
  python3 -c 'import triton' >/dev/null 2>&1 && return 0
  [[ -x $triton_env/bin/python3 ]] && "$triton_env/bin/python3" -c 'import triton' >/dev/null 2>&1 && return 0
  echo "install-deps: installing triton (Python)" >&2
  local pip=(--quiet --disable-pip-version-check --root-user-action=ignore 'triton>=3.4,<3.6')
  if python3 -c 'import os, sys, sysconfig; sys.exit(os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))' &&
    python3 -m pip --version >/dev/null 2>&1; then
    python3 -m pip install "${pip[@]}" && return 0
  fi
  python3 -m venv "$triton_env" && "$triton_env/bin/python3" -m pip install "${pip[@]}" && return 0
  echo "install-deps: WARNING: triton could not be installed; the Triton compile tests will skip" >&2
}

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  install_triton
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
install_triton
