#!/usr/bin/env bash
# Builds a self-contained bundle of kbench: bin/ (coordinator, worker, client, and the GPU test and
# benchmark programs when built) and lib/ (every shared library they need except glibc's and CUDA's,
# which GPU nodes have). Binaries find lib/ through their $ORIGIN rpath.
# Usage: deploy/bundle.sh BUILD_DIR OUT_DIR  (then: tar czf kbench.tgz -C OUT_DIR .)
set -euo pipefail
build=${1:?usage: bundle.sh BUILD_DIR OUT_DIR}
out=${2:?usage: bundle.sh BUILD_DIR OUT_DIR}
rm -rf "$out"
cmake --install "$build" --prefix "$out" >/dev/null
mkdir -p "$out/bin" "$out/lib" "$out/tests"
# Test and benchmark programs that run on GPU hosts travel too, with the same rpath: every *_gpu_test
# (kernels_gpu_test, gemm_gpu_test, plugin_ab_gpu_test: the A/B verdicts of kernels/plugin), kbench-bench
# and the *_probe programs (tests/gpu: measurements the family READMEs cite).
# The test kernel library (the fault-injection op, kernels/testing/) goes with them: the isolation
# phases of tests/gpu/run-on-gpu.sh and run-multi-gpu.sh submit it as their job's plugin.
for t in "$build"/bin/*_gpu_test "$build"/bin/*_probe "$build"/bin/gemm_sass_test "$build"/bin/kbench-bench \
  "$build"/lib/libkbench_test_kernels.so; do
  [[ -x "$t" ]] && cp "$t" "$out/tests/"
done

# Left out: the C library family (the node's own must be used) and CUDA's libraries (the driver's
# and the toolkit's, present on every GPU node; NVRTC alone is over 100 MB).
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libresolv\.|libutil\.|libcuda\.|libcudart|libcublas|libcublasLt|libnvrtc|libnvidia-ml|libnvJitLink|libcudnn)'
copy_deps() {
  ldd "$1" 2>/dev/null | awk '/=> \// {print $1, $3}' | while read -r name path; do
    [[ "$name" =~ $skip ]] && continue
    [[ -e "$out/lib/$name" ]] && continue
    cp -L "$path" "$out/lib/$name"
  done
}
for f in "$out"/bin/* "$out"/tests/* "$out"/lib/*.so*; do
  [[ -f "$f" ]] && copy_deps "$f"
done
# A deploy artifact carries no debug information (the build tree keeps it).
for f in "$out"/bin/* "$out"/tests/* "$out"/lib/*.so*; do
  [[ -f "$f" && ! -L "$f" ]] && strip --strip-debug "$f" 2>/dev/null
done
# Copied libraries bring their own dependencies (already resolved by ldd transitively above).
cat >"$out/README" <<TXT
kbench bundle: bin/ kbench-coordinator, kbench-worker, kbench-client; lib/ their libraries;
tests/ GPU test and benchmark programs, and the test kernel library (the fault-injection op).
Needs glibc >= the build host's and, for CUDA, the CUDA 13 runtime and cuBLAS (in
/usr/local/cuda/lib64 or on LD_LIBRARY_PATH).
TXT
du -sh "$out" | awk '{print "bundle: " $2 " (" $1 ")"}'
