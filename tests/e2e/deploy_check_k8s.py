"""deploy_check.py's k8s and kustomize checks (see its docstring)."""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from deploy_check_util import *  # noqa: F401,F403

# --- k8s ---

def pod_spec(obj):
    kind = obj.get("kind")
    if kind in ("Deployment", "StatefulSet", "DaemonSet"):
        return obj["spec"]["template"]["spec"], obj["spec"]["template"]["metadata"].get("labels", {})
    return None, None


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def cmd_k8s(a):
    base = os.path.join(a.repo, "deploy/k8s/base")
    kust = load_yaml_all(os.path.join(base, "kustomization.yaml"))
    if not check(len(kust) == 1, "kustomization.yaml: one document"):
        return
    kust = kust[0]
    check(kust.get("kind") == "Kustomization", "kustomization.yaml: kind Kustomization")
    namespace = kust.get("namespace")
    check(namespace == "kbench", "kustomization.yaml: namespace kbench")
    objects = []
    for res in kust.get("resources", []):
        path = os.path.join(base, res)
        if not check(os.path.isfile(path), f"kustomization.yaml lists {res}, which does not exist"):
            continue
        for d in load_yaml_all(path):
            objects.append((res, d))
    listed = set(kust.get("resources", []))
    for path in glob.glob(os.path.join(base, "*.yaml")):
        name = os.path.basename(path)
        check(name == "kustomization.yaml" or name in listed, f"{name} is not listed in kustomization.yaml")

    by_kind = {}
    for res, o in objects:
        where = f"{res}: {o.get('kind')}/{o.get('metadata', {}).get('name')}"
        check(isinstance(o.get("apiVersion"), str) and o["apiVersion"], f"{where}: apiVersion")
        check(isinstance(o.get("kind"), str) and o["kind"], f"{where}: kind")
        check(o.get("metadata", {}).get("name"), f"{where}: metadata.name")
        check(o.get("metadata", {}).get("namespace") in (None, namespace),
              f"{where}: a namespace other than the kustomization's")
        by_kind.setdefault(o.get("kind"), {})[o["metadata"]["name"]] = o
    for kind in ("Namespace", "Deployment", "StatefulSet", "DaemonSet", "Service", "Secret", "ConfigMap"):
        check(kind in by_kind, f"no {kind} in the base")

    images = {i["name"] for i in kust.get("images", [])}
    coordinator_flags = binary_flags(a.coordinator)
    worker_flags = binary_flags(a.worker)
    workloads = [(n, o) for k in ("Deployment", "StatefulSet", "DaemonSet") for n, o in by_kind.get(k, {}).items()]
    for name, o in workloads:
        spec, labels = pod_spec(o)
        where = f"{o['kind']}/{name}"
        check(matches(o["spec"]["selector"].get("matchLabels"), labels),
              f"{where}: selector does not match the pod template's labels")
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            cw = f"{where} container {c['name']}"
            image = c.get("image", "")
            check(image in images or ":" in image, f"{cw}: image {image!r} is neither set by the kustomization "
                                                   "nor pinned to a tag")
            for env in c.get("env", []):
                ref = env.get("valueFrom", {})
                if "secretKeyRef" in ref:
                    s = by_kind.get("Secret", {}).get(ref["secretKeyRef"]["name"])
                    if check(s is not None, f"{cw}: Secret {ref['secretKeyRef']['name']} is not in the base"):
                        keys = set(s.get("stringData", {})) | set(s.get("data", {}))
                        check(ref["secretKeyRef"]["key"] in keys, f"{cw}: Secret key {ref['secretKeyRef']['key']}")
                if "configMapKeyRef" in ref:
                    cm = by_kind.get("ConfigMap", {}).get(ref["configMapKeyRef"]["name"])
                    if check(cm is not None, f"{cw}: ConfigMap {ref['configMapKeyRef']['name']} is not in the base"):
                        check(ref["configMapKeyRef"]["key"] in cm.get("data", {}),
                              f"{cw}: ConfigMap key {ref['configMapKeyRef']['key']}")
            # $(VAR) in args must be defined in the container's env, or Kubernetes passes it literally.
            env_names = {e["name"] for e in c.get("env", [])}
            for arg in c.get("args", []) + c.get("command", []):
                for var in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", arg):
                    check(var in env_names, f"{cw}: $({var}) in its arguments is not in its env")
            if image == "kbench-coordinator":
                check_flags(c.get("args", []), coordinator_flags, cw)
            if image == "kbench-worker":
                check_flags(c.get("args", []), worker_flags, cw)
            mounts = {m["name"] for m in c.get("volumeMounts", [])}
            volumes = {v["name"] for v in spec.get("volumes", [])}
            claims = {t["metadata"]["name"] for t in o["spec"].get("volumeClaimTemplates", [])}
            for m in mounts:
                check(m in volumes | claims, f"{cw}: volume mount {m} has no volume")

    # Services select a workload's pods and name ports its containers have.
    for name, svc in by_kind.get("Service", {}).items():
        sel = svc["spec"].get("selector", {})
        targets = [(n, o) for n, o in workloads if matches(sel, pod_spec(o)[1])]
        if not check(targets, f"Service/{name} selects no workload"):
            continue
        ports = {p.get("name") for _, o in targets for c in pod_spec(o)[0]["containers"] for p in c.get("ports", [])}
        numbers = {p.get("containerPort") for _, o in targets for c in pod_spec(o)[0]["containers"]
                   for p in c.get("ports", [])}
        for p in svc["spec"]["ports"]:
            t = p.get("targetPort", p["port"])
            check(t in ports or t in numbers, f"Service/{name} port {p['port']}: target {t} is no container port")

    # What the deployment promises.
    coord = by_kind.get("Deployment", {}).get("kbench-coordinator")
    if check(coord is not None, "Deployment kbench-coordinator"):
        check(coord["spec"].get("replicas") == 2, "kbench-coordinator: 2 replicas")
        c = pod_spec(coord)[0]["containers"][0]
        check(any(arg.startswith("--db=postgresql://") or arg == "--db=$(KBENCH_DB)" for arg in c["args"]),
              "kbench-coordinator: --db from the Secret")
        check({p["containerPort"] for p in c["ports"]} == {50051, 9464}, "kbench-coordinator: ports 50051 and 9464")
        check("--listen=0.0.0.0:50051" in c["args"] and "--metrics-listen=0.0.0.0:9464" in c["args"],
              "kbench-coordinator: listens on 50051 and 9464 on every interface")
        db = by_kind.get("Secret", {}).get("kbench-db", {}).get("stringData", {})
        check(db.get("db-uri", "").startswith("postgresql://"), "Secret kbench-db: db-uri is a postgresql:// URI")
        pw = db.get("POSTGRES_PASSWORD", "")
        check(pw and f":{pw}@" in db.get("db-uri", ""), "Secret kbench-db: db-uri carries POSTGRES_PASSWORD")
    svc = by_kind.get("Service", {}).get("kbench-coordinator")
    if check(svc is not None, "Service kbench-coordinator"):
        check({p["port"] for p in svc["spec"]["ports"]} == {50051, 9464}, "Service kbench-coordinator: 50051, 9464")
    # prometheus-kubernetes.yml finds the coordinators through this headless Service.
    headless = by_kind.get("Service", {}).get("kbench-coordinator-metrics")
    if check(headless is not None, "Service kbench-coordinator-metrics (Prometheus DNS discovery)"):
        check(headless["spec"].get("clusterIP") == "None", "kbench-coordinator-metrics is headless")
        with open(os.path.join(a.repo, "deploy/prometheus/prometheus-kubernetes.yml")) as f:
            check(f"kbench-coordinator-metrics.{namespace}.svc" in f.read(),
                  "prometheus-kubernetes.yml resolves kbench-coordinator-metrics")
    pg = by_kind.get("StatefulSet", {}).get("kbench-postgres")
    if check(pg is not None, "StatefulSet kbench-postgres"):
        check(pg["spec"].get("volumeClaimTemplates"), "kbench-postgres: a persistent volume")
        check("kbench-postgres" in by_kind.get("Service", {}), "Service kbench-postgres")
    ds = by_kind.get("DaemonSet", {}).get("kbench-worker")
    if check(ds is not None, "DaemonSet kbench-worker"):
        spec = pod_spec(ds)[0]
        terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        products = [v for t in terms for e in t["matchExpressions"] if e["key"] == "nvidia.com/gpu.product"
                    for v in e["values"]]
        check(any("A100" in p for p in products) and any("H100" in p for p in products),
              "kbench-worker: node affinity on nvidia.com/gpu.product with A100 and H100 values")
        check(all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", p) and len(p) <= 63 for p in products),
              "kbench-worker: gpu.product values must be valid label values (GPU feature discovery's, no spaces)")
        gpus = spec["containers"][0]["resources"]["limits"].get("nvidia.com/gpu")
        check(isinstance(gpus, int) and gpus >= 1, "kbench-worker: requests nvidia.com/gpu")
        check(any(t.get("key") == "nvidia.com/gpu" for t in spec.get("tolerations", [])),
              "kbench-worker: tolerates the nvidia.com/gpu taint")
        args = spec["containers"][0]["args"]
        check(any(x.startswith("--coordinator=kbench-coordinator:50051") for x in args),
              "kbench-worker: pulls from the kbench-coordinator Service")
    print(f"checked {len(objects)} objects")


# --- kustomize ---

def cmd_kustomize(a):
    kubectl = os.environ.get("KUBECTL") or need("kubectl", "kubernetes-client")
    if not kubectl:
        return
    r = run([kubectl, "kustomize", os.path.join(a.repo, "deploy/k8s/base")])
    if not check(r.returncode == 0, f"kubectl kustomize:\n{r.stderr}"):
        return
    import yaml
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    kinds = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in docs)
    print("\n".join(kinds))
    for d in docs:
        if d["kind"] != "Namespace":
            check(d["metadata"].get("namespace") == "kbench", f"{d['kind']}/{d['metadata']['name']}: namespace kbench")
        spec, _ = pod_spec(d)
        for c in (spec or {}).get("containers", []):
            check(c["image"].count(":") >= 1, f"{d['kind']}/{d['metadata']['name']}: image {c['image']} has a tag")
