"""Shared helpers of deploy_check.py: failure collection, running tools, YAML, metric names, flags."""
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
    """Metric names that server/service/metrics.cc registers, with the series a histogram adds."""
    with open(os.path.join(repo, "server/service/metrics.cc")) as f:
        src = f.read()
    names = set()
    for kind, name in re.findall(r'Build(Counter|Gauge|Histogram|Summary)\(\)\s*\.Name\("([a-z_:]+)"\)', src):
        names.add(name)
        if kind == "Histogram":
            names.update({name + "_bucket", name + "_sum", name + "_count"})
    if not names:
        fail("found no metric definitions in server/service/metrics.cc")
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
