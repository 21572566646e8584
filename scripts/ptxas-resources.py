#!/usr/bin/env python3
"""Prints ptxas's resource report for kernel sources as a Markdown table (kernels/*/RESOURCES.md).

usage: scripts/ptxas-resources.py FILE.cu...   (run from the repository root; needs nvcc)

Compiles each file for sm_80 and sm_90a with the library's flags plus -Xptxas -v and lists, per
kernel and architecture: registers per thread, static shared memory, stack frame and spills.
"""
import re
import subprocess
import sys
from pathlib import Path

FLAGS = ["-std=c++20", "-O3", "--expt-relaxed-constexpr", "-Xptxas=-warn-spills", "-lineinfo", "-Ikernels",
         "-DKBENCH_HAVE_CUDA=1", "--generate-code=arch=compute_80,code=[sm_80]",
         "--generate-code=arch=compute_90a,code=[sm_90a]", "-Xptxas", "-v", "-c", "-o", "/dev/null"]


def short(name):
    name = re.sub(r"kbench::kernels::(\w+::)*(\(anonymous namespace\)::)?", "", name)
    name = name.replace("__nv_bfloat16", "bf16")
    return re.sub(r"\(.*\)$", "", name)  # drop the parameter list


def report(path):
    nvcc = "/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else "nvcc"
    out = subprocess.run([nvcc, *FLAGS, path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{path}: nvcc failed\n{out.stderr}")
    text = subprocess.run(["c++filt"], input=out.stderr, capture_output=True, text=True).stdout
    rows, kernel, arch, stack, spills = [], None, None, 0, "0 / 0"
    for line in text.splitlines():
        if m := re.search(r"Compiling entry function '(.*)' for '(sm_\w+)'", line):
            kernel, arch = short(m.group(1)), m.group(2)
        elif m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line):
            stack, spills = int(m.group(1)), f"{m.group(2)} / {m.group(3)}"
        elif (m := re.search(r"Used (\d+) registers", line)) and kernel:
            smem = re.search(r"(\d+) bytes smem", line)
            rows.append((Path(path).name, kernel, arch, int(m.group(1)), int(smem.group(1)) if smem else 0, stack, spills))
            kernel, stack, spills = None, 0, "0 / 0"
    return rows


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    print("| file | kernel | arch | registers | static smem (B) | stack (B) | spill stores / loads (B) |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    for path in sys.argv[1:]:
        for f, k, a, r, s, st, sp in sorted(report(path)):
            print(f"| {f} | `{k}` | {a} | {r} | {s} | {st} | {sp} |")


if __name__ == "__main__":
    main()
