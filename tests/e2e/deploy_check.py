#!/usr/bin/env python3
"""Static checks of deploy/: each subcommand is one ctest (tests/e2e/CMakeLists.txt).

  prometheus  promtool check config / check rules, promtool test rules on prometheus_alerts_test.yml
  yaml        every YAML file under deploy/ parses (python3-yaml)
  k8s         kustomization resources exist and are consistent: kinds, names, selectors, ports,
              Secret and ConfigMap references, GPU scheduling, flags known to the binaries
  kustomize   `kubectl kustomize deploy/k8s/base` builds
  grafana     dashboard JSON: every panel has a datasource and PromQL that promtool parses, over
              metrics that server/service/metrics.cc defines; provisioning files
  alerts      every metric in alerts.yml is one that server/service/metrics.cc defines
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_check_util import *  # noqa: E402,F401,F403
from deploy_check_k8s import cmd_k8s, cmd_kustomize  # noqa: E402,F401
from deploy_check_host import cmd_docker, cmd_systemd  # noqa: E402,F401


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
                    check(m in defined, f"{where}: metric {m} is not defined in server/service/metrics.cc")
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
                    check(m in defined, f"alert {rule.get('alert')}: metric {m} is not defined in server/service/metrics.cc")
                check(rule.get("annotations", {}).get("summary"), f"alert {rule.get('alert')}: a summary")
    check(n >= 5, "alert rules")
    print(f"checked {n} rules")


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
