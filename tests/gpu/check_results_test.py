#!/usr/bin/env python3
"""check_results.py (the GPU run's pass/fail checks) on synthetic files: every check passes what it
must pass and fails each way it must fail. No GPU needed (CTest label unit)."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CHECK = Path(__file__).resolve().parent / "check_results.py"


def run(*args):
    p = subprocess.run([sys.executable, str(CHECK), *map(str, args)], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def result(variant, status, index=0, median_ns=None, message="", write_back_ns=None):
    r = {"job_id": "j-1", "index": index, "variant": variant, "status": status, "status_message": message}
    if median_ns is not None:
        r["timing"] = {"median_ns": str(median_ns)}
        if write_back_ns is not None:
            r["timing"]["write_back_ns"] = write_back_ns
    return r


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="check-results-test."))

    def write(self, name, text):
        p = self.dir / name
        p.write_text(text)
        return p


class Statuses(Base):
    ISOLATION = "cuda_ok=OK,cuda_oob_write=RUNTIME_ERROR,cuda_hang=TIMEOUT"

    def test_every_result_ok(self):
        f = self.write("a.json", json.dumps([result("v1", "OK"), result("v2", "OK", 1)]))
        self.assertEqual(run("statuses", f, "OK")[0], 0)

    def test_a_default_with_an_exception(self):
        expect = "OK,cuda_v4_warp_row=SKIPPED"
        rows = [result("cuda_v1", "OK"), result("cuda_v4_warp_row", "SKIPPED", 1), result("cuda_v5", "OK", 2)]
        self.assertEqual(run("statuses", self.write("m.json", json.dumps(rows)), expect)[0], 0)
        rows[2]["status"] = "SKIPPED"
        rc, out = run("statuses", self.write("m.json", json.dumps(rows)), expect)
        self.assertEqual(rc, 1)
        self.assertIn("cuda_v5 #2: SKIPPED, expected OK", out)
        rc, out = run("statuses", self.write("m.json", json.dumps(rows[:1])), expect)
        self.assertEqual(rc, 1)
        self.assertIn("no result for cuda_v4_warp_row", out)

    def test_one_result_not_ok_fails_naming_it(self):
        f = self.write("a.json", json.dumps([result("v1", "OK"), result("v2", "INCORRECT", 1, message="3 mismatches")]))
        rc, out = run("statuses", f, "OK")
        self.assertEqual(rc, 1)
        self.assertIn("v2 #1: INCORRECT, expected OK (3 mismatches)", out)

    def test_no_results_fails(self):
        for text in ["[]", "", "[null]"]:
            rc, out = run("statuses", self.write("e.json", text), "OK")
            self.assertEqual(rc, 1, text)
            self.assertIn("no results", out)
        self.assertEqual(run("statuses", self.dir / "missing.json", "OK")[0], 1)

    def test_not_json_fails(self):
        rc, out = run("statuses", self.write("bad.json", "[{"), "OK")
        self.assertEqual(rc, 1)
        self.assertIn("not JSON results", out)

    def test_isolation_expected_statuses(self):
        good = [result("cuda_ok", "OK"), result("cuda_oob_write", "RUNTIME_ERROR", 1), result("cuda_hang", "TIMEOUT", 2)]
        self.assertEqual(run("statuses", self.write("i.json", json.dumps(good)), self.ISOLATION)[0], 0)
        # The hang reported as a runtime error, the fault as OK, a variant missing, one not asked for.
        for bad, why in [
            ([good[0], good[1], result("cuda_hang", "RUNTIME_ERROR", 2)], "cuda_hang #2: RUNTIME_ERROR, expected TIMEOUT"),
            ([good[0], result("cuda_oob_write", "OK", 1), good[2]], "cuda_oob_write #1: OK, expected RUNTIME_ERROR"),
            (good[:2], "no result for cuda_hang (expected TIMEOUT)"),
            (good + [result("cuda_other", "OK", 3)], "unexpected variant cuda_other"),
        ]:
            rc, out = run("statuses", self.write("i.json", json.dumps(bad)), self.ISOLATION)
            self.assertEqual(rc, 1, why)
            self.assertIn(why, out)


class Gtest(Base):
    def report(self, cases):
        body = "".join(f'<testcase name="{n}" classname="S" result="{r}">{inner}</testcase>' for n, r, inner in cases)
        return self.write("r.xml", f'<?xml version="1.0"?><testsuites><testsuite name="S">{body}</testsuite></testsuites>')

    def test_all_passed(self):
        self.assertEqual(run("gtest", self.report([("A", "completed", ""), ("B", "completed", "")]))[0], 0)

    def test_a_skip_fails(self):
        rc, out = run("gtest", self.report([("A", "completed", ""), ("B", "skipped", '<skipped message="no GPU"/>')]))
        self.assertEqual(rc, 1)
        self.assertIn("S.B skipped", out)

    def test_a_failure_fails(self):
        rc, out = run("gtest", self.report([("A", "completed", '<failure message="x"/>')]))
        self.assertEqual(rc, 1)
        self.assertIn("S.A failed", out)

    def test_no_test_or_no_report_fails(self):
        self.assertEqual(run("gtest", self.report([]))[0], 1)
        self.assertEqual(run("gtest", self.dir / "none.xml")[0], 1)


class Timing(Base):
    def ncu_csv(self, key, values_us):
        rows = ['"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"']
        rows += [f'"{i}","K","gpu__time_duration.sum","usecond","{v}"' for i, v in enumerate(values_us)]
        self.write(f"ncu-{key}.csv", "==PROF== noise\n" + "\n".join(rows) + "\n")

    def harness(self, key, median_ns, status="OK", write_back_ns=None):
        self.write(f"timing-{key}.jsonl",
                   json.dumps(result("v", status, median_ns=median_ns, write_back_ns=write_back_ns)) + "\n")

    def test_within_the_bound_passes(self):
        self.harness("rmsnorm-v5", 142_500)
        self.ncu_csv("rmsnorm-v5", [141.0, 141.3, 141.6])
        rc, out = run("timing", self.dir, 0.03)
        self.assertEqual(rc, 0, out)
        self.assertIn("+0.85%", out)

    def test_the_write_back_is_taken_out_before_comparing(self):
        # ncu's window ends with the kernel: 8.5 us of write-back inside the harness's median is not a difference.
        self.harness("rmsnorm-v7", 150_000, write_back_ns=8_500)
        self.ncu_csv("rmsnorm-v7", [141.3])
        rc, out = run("timing", self.dir, 0.02)
        self.assertEqual(rc, 0, out)
        self.assertIn("kernel-only 141.50 us", out)
        self.harness("rmsnorm-v7", 150_000)  # the same median without the write-back field: +6.2%
        self.assertEqual(run("timing", self.dir, 0.02)[0], 1)

    def test_beyond_the_bound_fails(self):
        self.harness("rmsnorm-v5", 150_000)
        self.ncu_csv("rmsnorm-v5", [141.3])
        rc, out = run("timing", self.dir, 0.03)
        self.assertEqual(rc, 1)
        self.assertIn("beyond the 3.0% bound", out)
        self.harness("rmsnorm-v5", 130_000)  # too fast is as wrong as too slow
        self.assertEqual(run("timing", self.dir, 0.03)[0], 1)

    def test_missing_ncu_or_harness_fails(self):
        self.harness("a-v", 100_000)
        rc, out = run("timing", self.dir, 0.03)
        self.assertEqual(rc, 1)
        self.assertIn("no Nsight Compute median", out)
        self.harness("a-v", 100_000, status="TIMEOUT")
        self.ncu_csv("a-v", [100.0])
        rc, out = run("timing", self.dir, 0.03)
        self.assertEqual(rc, 1)
        self.assertIn("no OK harness result", out)
        self.assertEqual(run("timing", self.dir / "empty", 0.03)[0], 1)


if __name__ == "__main__":
    unittest.main()
