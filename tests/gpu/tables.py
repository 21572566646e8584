#!/usr/bin/env python3
"""Tables from a GPU run's results (tests/gpu/run-on-gpu.sh), for the family READMEs.

  tables.py timing OUT          harness medians next to Nsight Compute's gpu__time_duration
  tables.py readmes OUT REPO    splices each family's table into kernels/<family>/README.md

Only numbers read from OUT's files are written: nothing here is estimated.
"""
import csv
import datetime
import json
import re
import statistics
import sys
from pathlib import Path

FAMILIES = {
    "elementwise": ["vector_add", "silu_mul_bias"],
    "reduction": ["reduce_sum", "rmsnorm", "softmax", "layernorm", "add_rmsnorm"],
    "gemm": ["gemm_bf16", "gemm_f32", "gemm_decode"],
}
BASELINE = {"DTYPE_BF16": "cublas_bf16", "DTYPE_F32": "cublas_sgemm"}
BEGIN, END = "<!-- kbench:results:begin -->", "<!-- kbench:results:end -->"


def snake(obj):
    """Proto JSON may use lowerCamelCase keys (the default printer); tables use the proto names."""
    if isinstance(obj, dict):
        return {re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), k): snake(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [snake(v) for v in obj]
    return obj


def load(path):
    p = Path(path)
    if not p.exists():
        return []
    text = p.read_text().strip()
    if not text:
        return []
    if text.startswith("["):
        return snake(json.loads(text))
    return [snake(json.loads(line)) for line in text.splitlines() if line.strip()]


def shape(r):
    return "x".join(str(int(d["value"])) for d in r["problem"]["dims"])


def dtype(r):
    return r["problem"].get("dtype", "").replace("DTYPE_", "").lower()


def ceiling(r, source):
    for c in r.get("roofline", {}).get("ceilings", []):
        if c.get("source") == source:
            return c
    return {}


def pct(x):
    return f"{100 * float(x):.1f}" if x not in (None, "") else "-"


def check(r):
    if r.get("status") == "OK":
        c = r.get("correctness", {})
        return f"ok (rel L2 {float(c.get('rel_l2_error', 0)):.1e})"
    return f"{r.get('status')}: {r.get('status_message', '').splitlines()[0][:60] if r.get('status_message') else ''}"


def memory_table(results):
    # The calibrated ceiling is the op's own traffic mix (worker/README.md): the column says which.
    rows = ["| op | variant | shape | dtype | median (us) | GB/s | % of calibrated ceiling | ceiling (mix) | % of datasheet BW | class | check |",
            "| --- | --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- | --- |"]
    for r in results:
        t, rf = r.get("timing", {}), r.get("roofline", {})
        ok = r.get("status") == "OK"
        cal = ceiling(r, "calibrated")
        rows.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["op"], r["variant"], shape(r), dtype(r),
            f"{float(t.get('median_ns', 0)) / 1e3:.1f}" if ok else "-",
            f"{float(rf.get('achieved_bytes_per_second', 0)) / 1e9:.0f}" if ok else "-",
            pct(cal.get("bandwidth_fraction")) if ok else "-",
            (cal.get("bandwidth_ceiling") or "copy") if ok else "-",
            pct(ceiling(r, "datasheet").get("bandwidth_fraction")) if ok and ceiling(r, "datasheet") else "-",
            rf.get("bound_class", "-").replace("_BOUND", "").lower() if ok else "-", check(r)))
    return rows


def gemm_table(results):
    base = {}
    for r in results:
        if r["variant"] == BASELINE.get(r["problem"].get("dtype")) and r.get("status") == "OK":
            base[(shape(r), dtype(r))] = float(r["timing"]["median_ns"])
    rows = ["| variant | shape | dtype | median (us) | TFLOP/s | GB/s | % of cuBLAS | % of calibrated peak | peak | regs | smem (B) | spills (B) | check |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |"]
    for r in results:
        t, rf = r.get("timing", {}), r.get("roofline", {})
        ok = r.get("status") == "OK"
        res = r.get("resources", [{}])
        res = max(res, key=lambda k: int(k.get("registers_per_thread", 0))) if res else {}
        b = base.get((shape(r), dtype(r)))
        rows.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["variant"], shape(r), dtype(r),
            f"{float(t.get('median_ns', 0)) / 1e3:.1f}" if ok else "-",
            f"{float(rf.get('achieved_flops_per_second', 0)) / 1e12:.1f}" if ok else "-",
            f"{float(rf.get('achieved_bytes_per_second', 0)) / 1e9:.0f}" if ok else "-",
            f"{100 * b / float(t['median_ns']):.1f}" if ok and b else "-",
            pct(ceiling(r, "calibrated").get("flops_fraction")) if ok else "-",
            (ceiling(r, "calibrated").get("peak_ceiling") or "GEMM") if ok else "-",
            res.get("registers_per_thread", "-"),
            int(res.get("static_shared_bytes", 0)) + int(res.get("dynamic_shared_bytes", 0)) if res else "-",
            res.get("local_bytes_per_thread", 0) if res else "-", check(r)))
    return rows


def ncu_median_ns(path):
    p = Path(path)
    if not p.exists():
        return None, 0
    lines = [l for l in p.read_text().splitlines() if l.startswith('"')]
    vals = []
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        scale = {"nsecond": 1, "ns": 1, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6}.get(row.get("Metric Unit", "ns"), 1)
        vals.append(float(row["Metric Value"].replace(",", "")) * scale)
    return (statistics.median(vals), len(vals)) if vals else (None, 0)


def kernel_only_ns(r):
    """The harness's median less the write-back it added (COLD, worker/README.md): ncu's
    gpu__time_duration ends with the kernel, before its dirty lines are written back."""
    t = r["timing"]
    return float(t["median_ns"]) - float(t.get("write_back_ns", 0) or 0)


def timing(out):
    rows = ["| op | variant | shape | dtype | harness median, write-back included (us) | write-back (us) "
            "| event window's cost subtracted (us) | harness kernel-only (us) | ncu gpu__time_duration median (us) "
            "| ncu launches | kernel-only vs ncu |",
            "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for path in sorted(Path(out).glob("timing-*.jsonl")):
        op = path.stem[len("timing-"):].split("-")[0]
        res = [r for r in load(path) if r.get("status") == "OK"]
        ncu, n = ncu_median_ns(Path(out) / ("ncu-" + path.stem[len("timing-"):] + ".csv"))
        if not res:
            rows.append(f"| {op} | - | - | - | (no harness result) | - | - | - | - | - | - |")
            continue
        r = res[-1]
        full, h = float(r["timing"]["median_ns"]), kernel_only_ns(r)
        offset = float(r["timing"].get("window_offset_ns", 0) or 0)
        rows.append("| {} | {} | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {} | {} | {} |".format(
            op, r["variant"], shape(r), dtype(r), full / 1e3, (full - h) / 1e3, offset / 1e3, h / 1e3,
            f"{ncu / 1e3:.2f}" if ncu else "-", n, f"{100 * (h - ncu) / ncu:+.2f}%" if ncu else "-"))
    return rows


def calibration_line(out):
    p = Path(out) / "calibration.txt"
    if not p.exists():
        return ""
    text = p.read_text()
    copy = re.search(r"copy_bytes_per_second:\s*([0-9.e+]+)", text)
    peaks = re.findall(r'key:\s*"(\w+)"\s*value:\s*([0-9.e+]+)', text)
    parts = [f"copy {float(copy.group(1)) / 1e12:.2f} TB/s"] if copy else []
    for field, name in (("read_bytes_per_second", "read-only"), ("write_bytes_per_second", "write-only"),
                        ("read_write_bytes_per_second", "1:1"), ("read2_write1_bytes_per_second", "2:1"),
                        ("l2_read_bytes_per_second", "L2 read")):
        m = re.search(field + r":\s*([0-9.e+]+)", text)
        if m:
            parts.append(f"{name} {float(m.group(1)) / 1e12:.2f} TB/s")
    parts += [f"GEMM {k} {float(v) / 1e12:.0f} TFLOP/s" for k, v in peaks]
    fma = re.search(r"fma_f32_flops_per_second:\s*([0-9.e+]+)", text)
    if fma:
        parts.append(f"f32 FMA {float(fma.group(1)) / 1e12:.1f} TFLOP/s")
    return "Calibrated ceilings of this run: " + ", ".join(parts) + "."


def device_name(results):
    for r in results:
        if r.get("device", {}).get("name"):
            return r["device"]["name"]
    return "unknown device"


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def merge_rows(old_block, new_rows, key_len, date):
    """The table of this run's rows, each with its date, and the rows of earlier runs that this run did
    not measure again (a run of some phases must not erase the others' rows); keyed by the first
    key_len cells (op, variant, shape, dtype; GEMM: variant, shape, dtype)."""
    header, sep = new_rows[0] + " measured |", new_rows[1] + " --- |"
    fresh = [r + f" {date} |" for r in new_rows[2:]]
    fresh_keys = {tuple(cells(r)[:key_len]) for r in fresh}
    old_date = re.search(r"Measured (\d{4}-\d{2}-\d{2})", old_block)
    table = []  # the block's first table: its first run of table lines
    for line in old_block.splitlines():
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    kept = []
    if table and cells(table[0])[:key_len] == cells(new_rows[0])[:key_len]:
        # An older table may have other columns: each kept row is laid out by the new header's names.
        names, old_names = cells(header), cells(table[0])
        for line in table[1:]:
            if line.startswith("| ---") or tuple(cells(line)[:key_len]) in fresh_keys:
                continue
            by_name = dict(zip(old_names, cells(line)))
            by_name.setdefault("measured", old_date.group(1) if old_date else "-")
            kept.append("| " + " | ".join(by_name.get(n, "-") for n in names) + " |")
    return [header, sep] + kept + fresh


def readmes(out, repo):
    date = datetime.date.today().isoformat()
    for family, names in FAMILIES.items():
        results = [r for n in names for r in load(Path(out) / f"{n}.json")]
        if not results:
            print(f"{family}: no results in {out}; README left as it is")
            continue
        readme = Path(repo) / "kernels" / family / "README.md"
        text = readme.read_text() if readme.exists() else f"# {family}\n"
        old_block = text[text.index(BEGIN):text.index(END)] if BEGIN in text and END in text else ""
        new_rows = gemm_table(results) if family == "gemm" else memory_table(results)
        rows = merge_rows(old_block, new_rows, 3 if family == "gemm" else 4, date)
        block = [BEGIN, "", f"Measured on {device_name(results)} through coordinator, CUDA worker and client "
                 "(`tests/gpu/run-on-gpu.sh`): cold L2, medians, three correctness trials per problem before timing "
                 "and one after; each row on the date it says (a run of some ops keeps the other rows).",
                 calibration_line(out).replace("of this run", f"of the {date} run"), ""] + rows
        timing_intro = ("Timing accuracy: the harness's median against Nsight Compute's `gpu__time_duration` "
                        "(`--clock-control none --cache-control all`) on the same kernel and problem")
        if family != "gemm" and (Path(out) / "timing.md").exists():
            block += ["", f"{timing_intro} ({date}):", ""]
            block += (Path(out) / "timing.md").read_text().strip().splitlines()
        elif "Timing accuracy:" in old_block:  # this run did not time against ncu: the last one's stays
            block += [""] + old_block[old_block.index("Timing accuracy:"):].strip().splitlines()
        block += ["", END]
        if old_block:
            text = text[: text.index(BEGIN)] + "\n".join(block) + text[text.index(END) + len(END):]
        else:
            text = text.rstrip() + "\n\n## Measured\n\n" + "\n".join(block) + "\n"
        readme.write_text(text)
        print(f"{family}: {len(new_rows) - 2} rows of this run, {len(rows) - len(new_rows)} kept, in {readme}")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "timing":
        print("\n".join(timing(sys.argv[2])))
    elif len(sys.argv) >= 4 and sys.argv[1] == "readmes":
        readmes(sys.argv[2], sys.argv[3])
    else:
        print(__doc__)
        sys.exit(2)
