#!/usr/bin/env python3
"""End to end with a real Prometheus: a coordinator (SQLite in a temp dir) and a CPU worker on
loopback, a tiny job submitted with the client, and Prometheus (Debian's /usr/bin/prometheus) run on
the shipped deploy/prometheus/prometheus.yml and alerts.yml, pointed at the coordinator's metrics port
and scraping every second. Then, through Prometheus's HTTP API:
  - the scrape target is up and the coordinator's metric families are there, with the job counted;
  - every query of every panel of deploy/grafana/dashboards/kbench.json returns data (with the
    dashboard's variables expanded as Grafana does for "All"), and its template variables have values;
  - every alert rule of alerts.yml evaluates without error, and none fires on this healthy cluster;
and `kbench-client plot` draws the job's results.

Usage: prometheus_e2e_test.py --repo DIR --coordinator BIN --worker BIN --client BIN [--prometheus BIN]
Every wait polls with a deadline; nothing sleeps to synchronise. KBENCH_E2E_KEEP=1 keeps the temp dir.
"""
import argparse
import csv
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

# Panels that cannot have data in this scenario, with the reason. Keep it short: a panel listed here
# is a panel this test does not check.
NO_DATA_EXPECTED = {
    # "panel title / refId": "reason",
}

POLL = 0.2  # Seconds between two polls of a remote state.


class Failure(Exception):
    pass


def log(msg):
    print(msg, flush=True)


def wait_for(what, deadline_s, probe):
    """Polls probe() until it returns a truthy value; raises with `what` at the deadline."""
    deadline = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < deadline:
        try:
            v = probe()
            if v:
                return v
            last = v
        except (OSError, urllib.error.URLError, ValueError, KeyError) as e:  # Not up yet.
            last = e
        time.sleep(POLL)
    raise Failure(f"timed out after {deadline_s}s waiting for {what} (last: {last!r})")


class Proc:
    """A child process whose output goes to a log file."""

    def __init__(self, name, argv, tmp):
        self.name, self.log_path = name, os.path.join(tmp, name + ".log")
        self.log = open(self.log_path, "w")
        self.p = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def line_word(self, marker):
        """The last word of the first log line that contains `marker`."""
        if self.p.poll() is not None:
            raise Failure(f"{self.name} exited with {self.p.returncode}:\n{self.text()}")
        for line in self.text().splitlines():
            if marker in line:
                return line.split()[-1]
        return None

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(timeout=10)
        self.log.close()


def http_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


class Prometheus:
    def __init__(self, base):
        self.base = base

    def query(self, expr):
        data = http_json(f"{self.base}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        if data.get("status") != "success":
            raise Failure(f"query {expr!r}: {data}")
        return data["data"]["result"]

    def targets(self):
        return http_json(f"{self.base}/api/v1/targets")["data"]["activeTargets"]

    def rules(self):
        return [r for g in http_json(f"{self.base}/api/v1/rules")["data"]["groups"] for r in g["rules"]]


def grafana_expand(expr):
    """The dashboard's variables as Grafana expands them with "All" selected (allValue .*)."""
    expr = expr.replace("$__rate_interval", "1m").replace("$__interval", "1s").replace("$__range", "1h")
    return re.sub(r"\$\{?(gpu_model|op)\}?", ".*", expr)


def finite_values(result):
    return [float(s["value"][1]) for s in result if math.isfinite(float(s["value"][1]))]


def write_config(repo, tmp, metrics_address):
    """deploy/prometheus/prometheus.yml as shipped, with the test's target and a 1 s interval."""
    import yaml  # Debian: python3-yaml
    with open(os.path.join(repo, "deploy/prometheus/prometheus.yml")) as f:
        cfg = yaml.safe_load(f)
    cfg["global"]["scrape_interval"] = "1s"
    cfg["global"]["evaluation_interval"] = "1s"
    jobs = [j for j in cfg["scrape_configs"] if j["job_name"] == "kbench-coordinator"]
    if len(jobs) != 1:
        raise Failure("prometheus.yml: expected one kbench-coordinator scrape job")
    jobs[0]["static_configs"][0]["targets"] = [metrics_address]
    shutil.copy(os.path.join(repo, "deploy/prometheus/alerts.yml"), os.path.join(tmp, "alerts.yml"))
    path = os.path.join(tmp, "prometheus.yml")
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--coordinator", required=True)
    ap.add_argument("--worker", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--prometheus", default=shutil.which("prometheus") or "/usr/bin/prometheus")
    a = ap.parse_args()
    if not os.access(a.prometheus, os.X_OK):
        log(f"FAIL: {a.prometheus} not found: install the Debian package prometheus (scripts/install-deps.sh does)")
        return 1

    tmp = tempfile.mkdtemp(prefix="kbench-prom-e2e.")
    procs = []
    try:
        run(a, tmp, procs)
        log("PASS")
        return 0
    except Failure as e:
        log(f"FAIL: {e}")
        for p in procs:
            log(f"--- {p.name} log (last 40 lines) ---\n" + "\n".join(p.text().splitlines()[-40:]))
        return 1
    finally:
        for p in reversed(procs):
            p.stop()
        if os.environ.get("KBENCH_E2E_KEEP"):
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run(a, tmp, procs):
    # The coordinator and a CPU worker, on loopback with ports the system picks.
    coord = Proc("coordinator", [a.coordinator, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                                 "--db", os.path.join(tmp, "kbench.db")], tmp)
    procs.append(coord)
    address = wait_for("the coordinator's gRPC port", 60, lambda: coord.line_word("kbench-coordinator listening on"))
    metrics = wait_for("the coordinator's metrics port", 10, lambda: coord.line_word("kbench-coordinator metrics on"))
    log(f"coordinator {address}, metrics {metrics}")
    worker = Proc("worker", [a.worker, "--coordinator", address, "--listen", "127.0.0.1:0", "--name", "prom-e2e",
                             "--backend", "cpu", "--quick-calibration", "--calibration-cache",
                             os.path.join(tmp, "calibration")], tmp)
    procs.append(worker)
    wait_for("the worker to register", 120, lambda: worker.line_word("kbench-worker registered as"))

    # Prometheus on the shipped configuration and rules, on a port it picks itself (a port found free
    # here and bound there later could be taken meanwhile by another test under ctest -j); it logs the
    # bound address at level info: msg="Listening on" address=127.0.0.1:PORT.
    prom = Proc("prometheus", [a.prometheus, "--config.file", write_config(a.repo, tmp, metrics),
                               "--storage.tsdb.path", os.path.join(tmp, "tsdb"),
                               "--web.listen-address", "127.0.0.1:0", "--log.level", "info"], tmp)
    procs.append(prom)
    listening = wait_for("prometheus's bound address", 60, lambda: prom.line_word('msg="Listening on"'))
    if not re.fullmatch(r"address=127\.0\.0\.1:[1-9][0-9]*", listening):
        raise Failure(f"prometheus: unexpected listening line ending {listening[:80]!r}")
    api = Prometheus(f"http://{listening[len('address='):]}")

    def ready():
        if prom.p.poll() is not None:
            raise Failure(f"prometheus exited with {prom.p.returncode}:\n{prom.text()}")
        with urllib.request.urlopen(f"{api.base}/-/ready", timeout=5) as r:
            return r.status == 200

    wait_for("prometheus to be ready", 60, ready)
    wait_for("the coordinator target to be up", 60,
             lambda: [t for t in api.targets() if t["labels"].get("job") == "kbench-coordinator" and t["health"] == "up"])
    # A first sample before the job, so that rates and histogram quantiles see it happen.
    wait_for("a first scrape", 30, lambda: api.query("kbench_jobs_finished_total"))
    log("prometheus scrapes the coordinator")

    # The job: a preset problem (explicit shapes are not tracked series, so they make no series
    # gauges) on the baseline branch, so that the series gauges exist too.
    r = subprocess.run([a.client, "--coordinator", address, "submit", "--op", "vector_add", "--preset", "small",
                        "--dtype", "f32", "--max-time-ms", "100", "--label", "branch=main", "--wait"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise Failure(f"submit --wait exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    job_id = re.search(r"\bj-[0-9a-z]+\b", r.stderr + r.stdout)
    if not job_id:
        raise Failure(f"no job id in the submit output:\n{r.stdout}\n{r.stderr}")
    job_id = job_id.group(0)
    log(f"job {job_id} succeeded")

    # Scraped after the job: its counters, and the series gauges from the next snapshot.
    wait_for("the finished job in Prometheus", 60,
             lambda: finite_values(api.query('kbench_jobs_finished_total{state="succeeded"} >= 1')))
    wait_for("the series gauges in Prometheus", 60, lambda: api.query("kbench_series_utilization"))

    failures = []
    # The coordinator's metric families.
    for expr in ["kbench_jobs_submitted_total >= 1", "kbench_jobs_requeued_total",
                 'kbench_jobs_finished_total{state="succeeded"} >= 1', 'kbench_results_total{status="ok"} >= 1',
                 "kbench_queue_depth", "kbench_jobs_running", "kbench_lease_calls_waiting", 'kbench_workers{state=~"idle|busy"} >= 1',
                 'kbench_job_duration_seconds_bucket{phase="queue"}', 'kbench_job_duration_seconds_bucket{phase="run"}',
                 'kbench_job_duration_seconds_count{phase="run"} >= 1',
                 'kbench_series_median_seconds{op="vector_add",variant=~".+",shape=~".+",dtype="f32",gpu_model=~".+"} > 0',
                 'kbench_series_utilization{op="vector_add"} > 0', 'kbench_series_regression{op="vector_add"} == 0',
                 'kbench_worker_copy_bandwidth_bytes_per_second{worker="prom-e2e"} > 0',
                 'kbench_worker_peak_flops{worker="prom-e2e",dtype="f32"} > 0',
                 'kbench_worker_unhealthy{worker="prom-e2e"} == 0']:
        if not api.query(expr):
            failures.append(f"no data for {expr}")

    # Every panel of the dashboard.
    with open(os.path.join(a.repo, "deploy/grafana/dashboards/kbench.json")) as f:
        dash = json.load(f)
    checked = 0
    for p in dash["panels"]:
        for t in p.get("targets", []):
            key = f"{p['title']} / {t['refId']}"
            if key in NO_DATA_EXPECTED:
                log(f"not checked: {key}: {NO_DATA_EXPECTED[key]}")
                continue
            expr = grafana_expand(t["expr"])
            result = api.query(expr)
            checked += 1
            if not result:
                failures.append(f"panel {key}: no data for {expr}")
            elif not finite_values(result):
                failures.append(f"panel {key}: only NaN/Inf for {expr}: {result}")
    unused = set(NO_DATA_EXPECTED) - {f"{p['title']} / {t['refId']}" for p in dash["panels"] for t in p["targets"]}
    if unused:
        failures.append(f"NO_DATA_EXPECTED names targets the dashboard does not have: {sorted(unused)}")
    for v in dash["templating"]["list"]:
        if v["type"] != "query":
            continue
        m = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", v["query"]["query"])
        if not m or not api.query(f"count by ({m.group(2)}) ({m.group(1)})"):
            failures.append(f"variable {v['name']}: no values for {v['query']['query']}")
    log(f"checked {checked} dashboard queries")

    # The alert rules: loaded, evaluated without error, none firing. Polled until they settle: while
    # the job was queued, the backlog rule could have seen a queue and no finished job yet.
    last = []

    def settled():
        rules = api.rules()
        last[:] = rules
        # An unevaluated rule reports the zero time, 0001-01-01T00:00:00Z.
        return rules and all(not r.get("lastEvaluation", "0001").startswith("0001") and r.get("health") == "ok"
                             and r.get("state") == "inactive" for r in rules)
    try:
        wait_for("every alert rule to be evaluated, healthy and inactive", 30, settled)
    except Failure:
        pass  # Reported rule by rule below.
    rules = last
    names = {r["name"] for r in rules}
    for name in ("KbenchRegression", "KbenchQueueBacklog", "KbenchWorkerLost", "KbenchUnhealthyGpu",
                 "KbenchJobsFailing"):
        if name not in names:
            failures.append(f"alert {name} is not loaded")
    for rule in rules:
        if rule.get("lastEvaluation", "0001").startswith("0001"):
            failures.append(f"alert {rule['name']} was never evaluated")
        if rule.get("health") != "ok":
            failures.append(f"alert {rule['name']}: health {rule.get('health')}: {rule.get('lastError')}")
        if rule.get("state") != "inactive":
            failures.append(f"alert {rule['name']} is {rule.get('state')} on a healthy cluster: {rule.get('alerts')}")
    log(f"checked {len(rules)} alert rules")

    # The Roofline chart of the job.
    svg = os.path.join(tmp, "roofline.svg")
    r = subprocess.run([a.client, "--coordinator", address, "plot", job_id, "-o", svg],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        failures.append(f"plot exited {r.returncode}: {r.stderr}")
    else:
        with open(svg) as f:
            text = f.read()
        csv_out = subprocess.run([a.client, "--coordinator", address, "results", job_id, "--format", "csv"],
                                 capture_output=True, text=True, timeout=60).stdout
        oks = sum(1 for row in csv.DictReader(io.StringIO(csv_out)) if row.get("status") == "OK")
        if "<svg" not in text or text.count("<circle") != oks or oks == 0:
            failures.append(f"plot: {text.count('<circle')} points for {oks} OK results")

    if failures:
        raise Failure("\n  " + "\n  ".join(failures))


if __name__ == "__main__":
    sys.exit(main())
