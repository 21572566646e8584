#!/usr/bin/env python3
"""Static checks of deploy/: each subcommand is one ctest (tests/e2e/CMakeLists.txt).

  prometheus  promtool check config / check rules, promtool test rules on prometheus_alerts_test.yml
  yaml        every YAML file under deploy/ parses (python3-yaml)
  k8s         kustomization resources exist and are consistent: kinds, names, selectors, ports,
              Secret and ConfigMap references, GPU scheduling, flags known to the binaries
  kustomize   `kubectl kustomize deploy/k8s/base` builds
  grafana     dashboard JSON: every panel has a datasource and PromQL that promtool parses, over
              metrics that server/metrics.cc defines; provisioning files
  alerts      every metric in alerts.yml is one that server/metrics.cc defines
  systemd     unit structure, flags known to the binaries, systemd-analyze verify where available
  docker      Dockerfiles: bases, bundle paths, and the coordinator image's Debian packages cover
              every shared library the built coordinator needs
  ci          deploy/ci/kbench-pr.yml: a pull_request workflow on kernels/ that builds the kernel library
              at base and head, runs `kbench-client compare --base-plugin --head-plugin` with flags the
              client knows, and creates or updates one marked PR comment

Usage: deploy_check.py CHECK --repo DIR [--coordinator BIN] [--worker BIN] [--client BIN]
Exit status: 0 pass, 1 fail. A tool a check needs (promtool, kubectl, systemd-analyze, dpkg-query,
ldd) is installed by scripts/install-deps.sh: its absence is a failure, never a silent pass.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)


def need(tool, package):
    path = shutil.which(tool)
    if path is None:
        fail(f"{tool} not found: install the Debian package {package} (scripts/install-deps.sh does)")
    return path


def load_yaml_all(path):
    try:
        import yaml  # Debian: python3-yaml
    except ImportError:
        fail("python3-yaml is missing: install it (scripts/install-deps.sh does)")
        return []
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def metrics_defined(repo):
    """Metric names that server/metrics.cc registers, with the series a histogram adds."""
    with open(os.path.join(repo, "server/metrics.cc")) as f:
        src = f.read()
    names = set()
    for kind, name in re.findall(r'Build(Counter|Gauge|Histogram|Summary)\(\)\s*\.Name\("([a-z_:]+)"\)', src):
        names.add(name)
        if kind == "Histogram":
            names.update({name + "_bucket", name + "_sum", name + "_count"})
    if not names:
        fail("found no metric definitions in server/metrics.cc")
    return names


PROMQL_WORDS = {
    "sum", "max", "min", "avg", "count", "by", "without", "on", "ignoring", "group_left", "group_right",
    "and", "or", "unless", "rate", "increase", "irate", "histogram_quantile", "quantile", "max_over_time",
    "min_over_time", "avg_over_time", "offset", "vector", "bool", "le", "topk", "bottomk", "abs", "clamp_min",
    "label_values", "time", "absent", "delta", "deriv", "sort", "sort_desc", "group", "count_values", "stddev",
}


def metric_names_in(expr):
    """Metric names an expression selects: identifiers followed by '{', '[' or not followed by '('."""
    no_strings = re.sub(r'"[^"]*"', '""', expr)
    no_labels = re.sub(r"\{[^}]*\}", "{}", no_strings)
    # Label lists of by/on/without/ignoring/group_left: not metric names.
    no_groupings = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1", no_labels)
    names = set()
    for m in re.finditer(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?", no_groupings):
        word, call = m.group(1), m.group(2)
        if call or word in PROMQL_WORDS or re.fullmatch(r"\d+[smhdwy]?", word):
            continue
        if word.startswith("kbench_") or word == "up":
            names.add(word)
    return names


def grafana_substitute(expr):
    """The dashboard's variables as Grafana would expand them with 'All' selected."""
    expr = expr.replace("$__rate_interval", "1m").replace("$__interval", "15s").replace("$__range", "1h")
    return re.sub(r"\$\{?(gpu_model|op)\}?", ".*", expr)


def promtool_parses(exprs, what):
    """Every expression parses as PromQL: as recording rules in a file promtool checks."""
    promtool = need("promtool", "prometheus")
    if not promtool or not exprs:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "exprs.yml")
        with open(path, "w") as f:
            f.write("groups:\n  - name: exprs\n    rules:\n")
            for i, (label, expr) in enumerate(exprs):
                f.write(f"      - record: kbench_check:expr_{i}\n        expr: {json.dumps(expr)}\n")
        r = run([promtool, "check", "rules", path])
        if r.returncode != 0:
            fail(f"{what}: promtool cannot parse an expression:\n{r.stdout}{r.stderr}\n" +
                 "\n".join(f"  {i}: {label}: {e}" for i, (label, e) in enumerate(exprs)))


def binary_flags(binary):
    """The flag names a kbench binary accepts, from its --help (dashes and underscores alike)."""
    if not binary:
        return None
    r = run([binary, "--help"])
    names = set(re.findall(r"^\s+--([a-z][a-z0-9_-]*)\s", r.stdout + r.stderr, re.M))
    check(names, f"{binary} --help lists no flags")
    return {n.replace("_", "-") for n in names}


def check_flags(args, known, where):
    if known is None:
        return
    for a in args:
        m = re.match(r"--([a-z][a-z0-9_-]*)", a)
        if m and not a.startswith("--" + "-"):
            check(m.group(1).replace("_", "-") in known, f"{where}: unknown flag --{m.group(1)} (not in --help)")


# --- prometheus ---

def cmd_prometheus(a):
    promtool = need("promtool", "prometheus")
    if not promtool:
        return
    prom = os.path.join(a.repo, "deploy/prometheus")
    for cfg in ("prometheus.yml", "prometheus-kubernetes.yml"):
        r = run([promtool, "check", "config", cfg], cwd=prom)
        check(r.returncode == 0, f"promtool check config {cfg}:\n{r.stdout}{r.stderr}")
        # Both configs load the alert rules.
        check("alerts.yml" in r.stdout + r.stderr, f"{cfg} does not load alerts.yml")
    r = run([promtool, "check", "rules", "alerts.yml"], cwd=prom)
    check(r.returncode == 0, f"promtool check rules alerts.yml:\n{r.stdout}{r.stderr}")
    tests = os.path.join(a.repo, "tests/e2e")
    r = run([promtool, "test", "rules", "prometheus_alerts_test.yml"], cwd=tests)
    check(r.returncode == 0, f"promtool test rules prometheus_alerts_test.yml:\n{r.stdout}{r.stderr}")
    # The alert names the deployment promises.
    docs = load_yaml_all(os.path.join(prom, "alerts.yml"))
    alerts = {rule.get("alert") for d in docs for g in d.get("groups", []) for rule in g.get("rules", [])}
    for name in ("KbenchRegression", "KbenchQueueBacklog", "KbenchWorkerLost", "KbenchUnhealthyGpu",
                 "KbenchJobsFailing"):
        check(name in alerts, f"alerts.yml has no alert {name}")


# --- yaml ---

def cmd_yaml(a):
    files = sorted(glob.glob(os.path.join(a.repo, "deploy/**/*.y*ml"), recursive=True))
    files.append(os.path.join(a.repo, "tests/e2e/prometheus_alerts_test.yml"))
    check(len(files) >= 10, f"expected the deploy YAML files, found {len(files)}")
    for path in files:
        try:
            docs = load_yaml_all(path)
        except Exception as e:  # yaml.YAMLError and friends: report which file.
            fail(f"{os.path.relpath(path, a.repo)} does not parse: {e}")
            continue
        check(docs and all(isinstance(d, dict) for d in docs),
              f"{os.path.relpath(path, a.repo)}: every document should be a mapping")
        print(f"ok {os.path.relpath(path, a.repo)} ({len(docs)} document{'s' if len(docs) != 1 else ''})")


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


# --- grafana ---

def cmd_grafana(a):
    defined = metrics_defined(a.repo)
    path = os.path.join(a.repo, "deploy/grafana/dashboards/kbench.json")
    with open(path) as f:
        dash = json.load(f)
    check(dash.get("uid") and dash.get("title"), "dashboard uid and title")
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    check(variables.get("datasource", {}).get("type") == "datasource", "a datasource variable")
    panels = dash.get("panels", [])
    check(len(panels) >= 10, "the dashboard's panels")
    exprs, ids, cells = [], set(), set()
    for p in panels:
        where = f"panel {p.get('id')} {p.get('title')!r}"
        check(p.get("id") not in ids, f"{where}: duplicate id")
        ids.add(p.get("id"))
        check(p.get("title"), f"{where}: title")
        ds = p.get("datasource") or {}
        check(ds.get("type") == "prometheus" and ds.get("uid"), f"{where}: datasource")
        g = p.get("gridPos", {})
        check(g.get("w", 0) > 0 and g.get("h", 0) > 0 and g.get("x", -1) >= 0 and g["x"] + g["w"] <= 24,
              f"{where}: gridPos within the 24 columns")
        for x in range(g.get("x", 0), g.get("x", 0) + g.get("w", 0)):
            for y in range(g.get("y", 0), g.get("y", 0) + g.get("h", 0)):
                check((x, y) not in cells, f"{where}: overlaps another panel at {x},{y}")
                cells.add((x, y))
        targets = p.get("targets", [])
        check(targets, f"{where}: targets")
        for t in targets:
            expr = (t.get("expr") or "").strip()
            check(expr, f"{where} {t.get('refId')}: empty expr")
            tds = t.get("datasource") or ds
            check(tds.get("type") == "prometheus", f"{where} {t.get('refId')}: datasource")
            if expr:
                exprs.append((f"{where} {t.get('refId')}", grafana_substitute(expr)))
                for m in metric_names_in(expr):
                    check(m in defined, f"{where}: metric {m} is not defined in server/metrics.cc")
    for name, v in variables.items():
        if v.get("type") == "query":
            q = v.get("query", {})
            q = q.get("query") if isinstance(q, dict) else q
            m = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", q or "")
            if check(m, f"variable {name}: label_values(metric, label)"):
                check(m.group(1) in defined, f"variable {name}: metric {m.group(1)} is not defined")
    # The metrics the dashboard is meant to show.
    shown = set().union(*(metric_names_in(e) for _, e in exprs)) if exprs else set()
    for m in ("kbench_series_utilization", "kbench_series_regression", "kbench_queue_depth", "kbench_jobs_running",
              "kbench_workers", "kbench_job_duration_seconds_bucket", "kbench_jobs_finished_total",
              "kbench_worker_unhealthy", "kbench_worker_copy_bandwidth_bytes_per_second"):
        check(m in shown, f"no panel shows {m}")
    promtool_parses(exprs, "dashboard")
    print(f"checked {len(panels)} panels, {len(exprs)} queries")

    prov = os.path.join(a.repo, "deploy/grafana/provisioning")
    dsf = load_yaml_all(os.path.join(prov, "datasources/kbench.yaml"))
    if check(len(dsf) == 1, "datasources/kbench.yaml: one document"):
        check(dsf[0].get("apiVersion") == 1, "datasources: apiVersion 1")
        check(any(d.get("type") == "prometheus" and d.get("url") for d in dsf[0].get("datasources", [])),
              "datasources: a prometheus data source with a url")
    dbf = load_yaml_all(os.path.join(prov, "dashboards/kbench.yaml"))
    if check(len(dbf) == 1, "dashboards/kbench.yaml: one document"):
        check(dbf[0].get("apiVersion") == 1, "dashboards: apiVersion 1")
        providers = dbf[0].get("providers", [])
        check(any(p.get("type") == "file" and p.get("options", {}).get("path") for p in providers),
              "dashboards: a file provider with a path")


def cmd_alerts(a):
    defined = metrics_defined(a.repo) | {"up"}
    docs = load_yaml_all(os.path.join(a.repo, "deploy/prometheus/alerts.yml"))
    n = 0
    for d in docs:
        for g in d.get("groups", []):
            for rule in g.get("rules", []):
                n += 1
                for m in metric_names_in(rule["expr"]):
                    check(m in defined, f"alert {rule.get('alert')}: metric {m} is not defined in server/metrics.cc")
                check(rule.get("annotations", {}).get("summary"), f"alert {rule.get('alert')}: a summary")
    check(n >= 5, "alert rules")
    print(f"checked {n} rules")


# --- systemd ---

def parse_unit(path):
    sections, current = {}, None
    with open(path) as f:
        for i, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith(("#", ";")):
                continue
            m = re.fullmatch(r"\[([A-Za-z]+)\]", line)
            if m:
                current = sections.setdefault(m.group(1), [])
                continue
            if not check(current is not None and "=" in line, f"{path}:{i}: expected Key=value in a section"):
                continue
            k, v = line.split("=", 1)
            current.append((k.strip(), v.strip()))
    return sections


def cmd_systemd(a):
    units = os.path.join(a.repo, "deploy/systemd")
    flags = {"kbench-coordinator": binary_flags(a.coordinator), "kbench-worker": binary_flags(a.worker)}
    binaries = {"kbench-coordinator": a.coordinator, "kbench-worker": a.worker}
    for name in ("kbench-coordinator", "kbench-worker"):
        path = os.path.join(units, name + ".service")
        s = parse_unit(path)
        for section in ("Unit", "Service", "Install"):
            check(section in s, f"{name}.service: [{section}]")
        service = dict(s.get("Service", []))
        exec_start = service.get("ExecStart", "")
        check(exec_start.startswith(f"/opt/kbench/bin/{name} "), f"{name}.service: ExecStart runs /opt/kbench/bin/{name}")
        check_flags(exec_start.split()[1:], flags[name], f"{name}.service ExecStart")
        envfiles = [v for k, v in s.get("Service", []) if k == "EnvironmentFile"]
        check(envfiles, f"{name}.service: an EnvironmentFile")
        # Every ${VAR} / $VAR of ExecStart is set by Environment= (a default) or the example env file.
        example = os.path.join(units, name.replace("kbench-", "") + ".env")
        env = {v.split("=", 1)[0] for k, v in s.get("Service", []) if k == "Environment"}
        if check(os.path.isfile(example), f"example EnvironmentFile {os.path.basename(example)}"):
            with open(example) as f:
                lines = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
            for ln in lines:
                check(re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", ln), f"{os.path.basename(example)}: KEY=value: {ln}")
                key, value = ln.split("=", 1)
                env.add(key)
                if key.endswith("_ARGS"):
                    check_flags(value.split(), flags[name], f"{os.path.basename(example)} {key}")
        for var in re.findall(r"\$\{?([A-Z_][A-Z0-9_]*)\}?", exec_start):
            check(var in env, f"{name}.service: ExecStart uses ${var}, set nowhere")
        check(dict(s.get("Install", [])).get("WantedBy") == "multi-user.target", f"{name}.service: WantedBy")
    check("EnvironmentFile=/etc/kbench/worker.env" in open(os.path.join(units, "kbench-worker.service")).read(),
          "kbench-worker.service: reads /etc/kbench/worker.env")

    analyze = need("systemd-analyze", "systemd")
    if not analyze:
        return
    if not (a.coordinator and a.worker):
        fail("systemd-analyze verify needs --coordinator and --worker (the ExecStart binaries)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        # The units as installed, but with ExecStart on the binaries just built: verify checks that
        # the command exists and is executable.
        paths = []
        for name in ("kbench-coordinator", "kbench-worker"):
            with open(os.path.join(units, name + ".service")) as f:
                text = f.read().replace(f"/opt/kbench/bin/{name}", os.path.abspath(binaries[name]))
            paths.append(os.path.join(tmp, name + ".service"))
            with open(paths[-1], "w") as f:
                f.write(text)
        r = run([analyze, "verify", *paths], env={**os.environ, "SYSTEMD_LOG_COLOR": "0"})
        out = (r.stdout + r.stderr).strip()
        # Any message is a finding: unknown keys and bad values are only warnings to systemd.
        check(r.returncode == 0 and not out, f"systemd-analyze verify:\n{out}")
        print("systemd-analyze verify: ok")


# --- docker ---

def debian_closure(packages):
    """Installed packages reachable from `packages` through Depends and Pre-Depends."""
    r = run(["dpkg-query", "-W", "-f=${Package}\t${Status}\t${Depends}, ${Pre-Depends}\n"])
    deps = {}
    for line in r.stdout.splitlines():
        name, status, depends = (line.split("\t") + ["", ""])[:3]
        if status == "install ok installed":
            # Any alternative of "a | b" may be the installed one: follow each.
            deps[name] = [re.sub(r"\(.*?\)|:\S+", "", alt).strip()
                          for dep in depends.split(",") for alt in dep.split("|")]
    seen, todo = set(), list(packages)
    while todo:
        p = todo.pop()
        if p in seen or p not in deps:
            continue
        seen.add(p)
        todo.extend(d for d in deps[p] if d)
    return seen


def owners(paths):
    """The Debian package that owns each path (as given, or with its symlinks resolved)."""
    out = {}
    candidates = sorted({c for p in paths for c in (p, os.path.realpath(p))})
    r = run(["dpkg-query", "-S", *candidates])
    for line in r.stdout.splitlines():
        pkgs, _, path = line.partition(": ")
        out[path.strip()] = pkgs.split(",")[0].split(":")[0].strip()
    return {p: out.get(p) or out.get(os.path.realpath(p)) for p in paths}


def cmd_docker(a):
    d = os.path.join(a.repo, "deploy/docker")
    texts = {}
    for name in ("coordinator.Dockerfile", "worker.Dockerfile"):
        with open(os.path.join(d, name)) as f:
            texts[name] = f.read()
        froms = re.findall(r"^FROM\s+(\S+)", texts[name], re.M)
        check(len(froms) == 1, f"{name}: one FROM")
        check(re.search(r'^ENTRYPOINT \["/opt/kbench/bin/kbench-(coordinator|worker)"\]', texts[name], re.M),
              f"{name}: ENTRYPOINT the kbench binary")
        check(re.search(r"^USER \d+", texts[name], re.M), f"{name}: runs as a non-root USER")
        # COPY sources are paths of the bundle (deploy/bundle.sh): bin/, lib/, tests/.
        for line in re.findall(r"^COPY\s+(.+)$", texts[name], re.M):
            for src in line.split()[:-1]:
                check(re.fullmatch(r"(bin|lib|tests)/[\w.-]*", src), f"{name}: COPY {src} is not a bundle path")
    check(re.search(r"^FROM debian:12\s*$", texts["coordinator.Dockerfile"], re.M), "coordinator: FROM debian:12")
    check(re.search(r"^FROM nvidia/cuda:13\.0\.0-runtime-ubuntu24\.04\s*$", texts["worker.Dockerfile"], re.M),
          "worker: FROM nvidia/cuda:13.0.0-runtime-ubuntu24.04")
    check("COPY bin/ " in texts["worker.Dockerfile"] and "COPY lib/ " in texts["worker.Dockerfile"],
          "worker: copies the bundle's bin/ and lib/")
    cmd = re.search(r'^CMD (\[.*\])', texts["coordinator.Dockerfile"], re.M)
    if check(cmd, "coordinator: CMD") and a.coordinator:
        check_flags(json.loads(cmd.group(1)), binary_flags(a.coordinator), "coordinator.Dockerfile CMD")
    cmd = re.search(r'^CMD (\[.*\])', texts["worker.Dockerfile"], re.M)
    if check(cmd, "worker: CMD") and a.worker:
        check_flags(json.loads(cmd.group(1)), binary_flags(a.worker), "worker.Dockerfile CMD")

    # The coordinator image installs Debian packages instead of the bundle's lib/: they must provide
    # every library the coordinator loads (what ldd resolves here, on the Debian 12 build host).
    m = re.search(r"apt-get install[^\n]*\\\n((?:\s+[\w.+-]+ \\\n)+)", texts["coordinator.Dockerfile"])
    if not check(m, "coordinator.Dockerfile: an apt-get install list"):
        return
    wanted = re.findall(r"[\w.+-]+", m.group(1))
    if not check(a.coordinator, "--coordinator (the built binary) is needed for the package coverage"):
        return
    if not (need("dpkg-query", "dpkg") and need("ldd", "libc-bin")):
        return
    closure = debian_closure(wanted)
    check(set(wanted) <= closure, f"coordinator.Dockerfile names packages not installed here: "
                                  f"{sorted(set(wanted) - closure)} (are they the Debian 12 names?)")
    r = run(["ldd", a.coordinator])
    libs = re.findall(r"=>\s+(/\S+)", r.stdout)
    check(libs, "ldd of kbench-coordinator")
    for lib, owner in owners(libs).items():
        if owner is None:
            fail(f"{lib}: no Debian package owns it; the coordinator image would lack it")
        elif owner != "libc6":  # debian:12 itself.
            check(owner in closure, f"{lib} ({owner}) is not brought by coordinator.Dockerfile's packages")
    print(f"coordinator: {len(libs)} libraries, all from {len(wanted)} Debian packages")


# --- ci ---


def client_compare_flags(client):
    """The flags `kbench-client compare` accepts (its --help), dashes and underscores alike."""
    if not client:
        return None
    r = run([client, "compare", "--help"])
    names = set(re.findall(r"^\s+--([a-z][a-z0-9_-]*)", r.stdout + r.stderr, re.M))
    check(names, f"{client} compare --help lists no flags")
    return {n.replace("_", "-") for n in names}


def cmd_ci(a):
    path = os.path.join(a.repo, "deploy/ci/kbench-pr.yml")
    docs = load_yaml_all(path)
    if not check(len(docs) == 1 and isinstance(docs[0], dict), "kbench-pr.yml: one workflow document"):
        return
    wf = docs[0]
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` key as true.
    pr = (on or {}).get("pull_request") if isinstance(on, dict) else None
    check(isinstance(pr, dict) and "kernels/**" in pr.get("paths", []), "runs on pull requests touching kernels/**")
    check(wf.get("permissions", {}).get("pull-requests") == "write", "permissions: pull-requests: write (the comment)")
    jobs = wf.get("jobs", {})
    if not check(len(jobs) >= 1, "at least one job"):
        return
    steps = [s for j in jobs.values() for s in j.get("steps", [])]
    runs = "\n".join(s.get("run", "") for s in steps)
    refs = [s.get("with", {}).get("ref", "") for s in steps if str(s.get("uses", "")).startswith("actions/checkout@")]
    check(any("pull_request.base.sha" in r for r in refs), "checks out the PR's base")
    check(any("pull_request.head.sha" in r for r in refs), "checks out the PR's head")
    check(runs.count("--target kbench_kernels") >= 1 and "for side in base head" in runs,
          "builds the kernel library at base and head")
    m = re.search(r"kbench-client\s+(.*?)>\s*report\.md", runs, re.S)
    if check(m is not None, "runs kbench-client ... > report.md"):
        args = m.group(1).replace("\\\n", " ").split()
        check("compare" in args, "the client runs compare")
        for flag in ("--base-plugin", "--head-plugin", "--format"):
            check(flag in args, f"compare gets {flag}")
        check("md" in args, "compare prints Markdown (--format md)")
        known = client_compare_flags(a.client)
        if known is not None:
            known |= {"tls-ca"}  # A global flag of the client, given before the subcommand.
        check_flags(args, known, "kbench-pr.yml compare")
    text = open(path).read()
    for secret in ("secrets.KBENCH_COORDINATOR", "secrets.KBENCH_TOKEN"):
        check(secret in text, f"reads {secret}")
    scripts = [s.get("with", {}).get("script", "") for s in steps if str(s.get("uses", "")).startswith("actions/github-script@")]
    check(len(scripts) == 1, "one actions/github-script step posts the comment")
    if scripts:
        sc = scripts[0]
        check("<!-- kbench-pr-compare -->" in sc, "the comment carries a marker")
        check("updateComment" in sc and "createComment" in sc, "updates the marked comment, or creates it")
    check(any("exit 1" in s.get("run", "") and "status" in str(s.get("if", "")) for s in steps),
          "fails the job when compare exits non-zero")
    print(f"kbench-pr.yml: {len(steps)} steps")


def main():
    checks = {n[4:]: f for n, f in globals().items() if n.startswith("cmd_")}
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("check", choices=sorted(checks))
    p.add_argument("--repo", required=True)
    p.add_argument("--coordinator")
    p.add_argument("--worker")
    p.add_argument("--client")
    a = p.parse_args()
    checks[a.check](a)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)", file=sys.stderr)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
