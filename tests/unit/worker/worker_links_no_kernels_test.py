#!/usr/bin/env python3
"""kbench-worker loads no kernel library: the runner child is the only process that does.

Fails when kbench-worker needs libkbench_kernels (directly or through another library), names it
anywhere in its file (a dlopen by name), or refers to any function the kernel library defines. The
same checks on kbench-runner must find the library, so that a check that can no longer see it fails
too. Usage: worker_links_no_kernels_test.py KBENCH_WORKER KBENCH_RUNNER LIBKBENCH_KERNELS
"""
import os
import re
import subprocess
import sys


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def needed(binary):
    """Every library the loader maps for `binary` (ldd: direct and indirect)."""
    out = run("ldd", binary)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


# One line of nm's output: an address (absent for an undefined symbol), the type letter, the name.
NM_LINE = re.compile(r"^\s*(?:[0-9a-fA-F]+\s+)?([A-Za-z?])\s+(.+)$")


def symbols(*nm_args):
    """(type, demangled name) of every line nm prints."""
    out = run("nm", "-C", *nm_args)
    return [(m.group(1), m.group(2)) for m in map(NM_LINE.match, out.splitlines()) if m]


def kernel_functions(library):
    """The kbench::kernels functions the kernel library defines (its own code, not inline header code)."""
    return {name for kind, name in symbols("-D", "--defined-only", library)
            if kind == "T" and name.startswith("kbench::kernels::")}


def referenced(binary):
    """Every symbol `binary` defines or refers to."""
    return {name for _, name in symbols(binary)}


def findings(binary, library):
    lib_name = os.path.basename(library).split(".so")[0]  # libkbench_kernels
    found = []
    libs = [n for n in needed(binary) if lib_name in n]
    if libs:
        found.append(f"needs {', '.join(libs)}")
    with open(binary, "rb") as f:
        if lib_name.encode() in f.read():
            found.append(f"names {lib_name} in its file")
    common = sorted(kernel_functions(library) & referenced(binary))
    if common:
        found.append(f"refers to {len(common)} kernel function(s), e.g. {common[0]}")
    return found


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    worker, runner, library = sys.argv[1:]
    if not kernel_functions(library):
        sys.exit(f"FAIL: no kbench::kernels function exported by {library}: the check cannot see the library")
    control = findings(runner, library)
    if len(control) < 2:
        sys.exit(f"FAIL: the control kbench-runner should need and use the kernel library; found only {control}")
    bad = findings(worker, library)
    if bad:
        sys.exit("FAIL: kbench-worker " + "; ".join(bad))
    print(f"ok: kbench-worker loads no kernel library (kbench-runner: {'; '.join(control)})")


if __name__ == "__main__":
    main()
