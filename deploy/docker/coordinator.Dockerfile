# kbench-coordinator image: Debian 12 with the coordinator's runtime libraries from Debian (the very
# versions the bundle was built against, on Debian 12) and the binaries from the bundle.
# The build context is a bundle made by deploy/bundle.sh on Debian 12:
#   deploy/bundle.sh build build/kbench-bundle
#   docker build -f deploy/docker/coordinator.Dockerfile -t kbench-coordinator:TAG build/kbench-bundle
FROM debian:12

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      libabsl20220623 \
      libgrpc++1.51 \
      libprotobuf32 \
      libprometheus-cpp-core1.0 \
      libprometheus-cpp-pull1.0 \
      libsqlite3-0 \
      libpq5 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /var/lib/kbench --create-home kbench

# The coordinator, and the client for `kubectl exec ... kbench-client status` (it finds the
# coordinator at 127.0.0.1:50051 by default). Only bin/: the libraries come from Debian above.
COPY bin/kbench-coordinator bin/kbench-client /opt/kbench/bin/

USER 10001:10001
WORKDIR /var/lib/kbench
# gRPC (clients, workers) and Prometheus /metrics.
EXPOSE 50051 9464
ENTRYPOINT ["/opt/kbench/bin/kbench-coordinator"]
# SQLite in the working directory unless --db names a PostgreSQL URI (Kubernetes: see deploy/k8s).
# --insecure: this default command is for a trial run and serves without authentication; real
# deployments replace it and pass --token-file (deploy/k8s mounts the Secret kbench-tokens).
CMD ["--listen=0.0.0.0:50051", "--metrics-listen=0.0.0.0:9464", "--db=/var/lib/kbench/kbench.db", "--insecure"]
