"""deploy_check.py's systemd and docker checks (see its docstring)."""
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
