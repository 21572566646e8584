# kbench-worker image for GPU nodes: the CUDA 13 runtime (cudart, cuBLAS, NVRTC; the driver and NVML
# come from the node through the NVIDIA container toolkit) and the self-contained bundle, bin/ and
# lib/, whose binaries find lib/ through their $ORIGIN rpath.
# The build context is a bundle made by deploy/bundle.sh on Debian 12 (glibc 2.36 <= Ubuntu 24.04's):
#   deploy/bundle.sh build build/kbench-bundle
#   docker build -f deploy/docker/worker.Dockerfile -t kbench-worker:TAG build/kbench-bundle
FROM nvidia/cuda:13.0.0-runtime-ubuntu24.04

COPY bin/ /opt/kbench/bin/
COPY lib/ /opt/kbench/lib/
# The GPU test and benchmark programs, for diagnosing a node with `kubectl exec`.
COPY tests/ /opt/kbench/tests/

RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/kbench --create-home kbench \
 && mkdir -p /var/cache/kbench \
 && chown kbench:kbench /var/cache/kbench

# compute: CUDA; utility: NVML (clocks and throttle reasons read around every measurement).
ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    XDG_CACHE_HOME=/var/cache \
    PATH=/opt/kbench/bin:$PATH

USER 10001:10001
WORKDIR /var/lib/kbench
ENTRYPOINT ["/opt/kbench/bin/kbench-worker"]
# Pull jobs only; the coordinator's address and labels come from the deployment's arguments.
CMD ["--listen="]
