#!/usr/bin/env python3
"""targets.py on synthetic results: the plan's one run an op, the best rung against the baseline or
the ceiling, per-problem and whole-target verdicts, flags telling problems apart, and a missing or
failed result making the report fail. No GPU needed (CTest label unit)."""
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import targets  # noqa: E402


def result(op, variant, dims, median_us, status="OK", flags=(), fraction=None, camel=False):
    r = {"op": op, "variant": variant, "status": status,
         "problem": {"dims": [{"name": k, "value": str(v)} for k, v in dims.items()], "flags": list(flags)},
         "timing": {"median_ns": median_us * 1e3}}
    if fraction is not None:
        r["roofline"] = {"ceilings": [{"source": "datasheet", "bandwidth_fraction": 0.99},
                                      {"source": "calibrated", "bandwidth_fraction": fraction}]}
    if camel:
        r["timing"] = {"medianNs": median_us * 1e3}
    return r


GEMV = dict(name="gemv 2x", op="w4a16_gemm", rungs=["v4", "v5"], problems=[({"M": 1, "N": 64, "K": 64}, ())],
            baseline="cublas", min_ratio=2.0)
ROPE = dict(name="rope 85%", op="rope", rungs=["v2"], problems=[({"tokens": 8}, ()), ({"tokens": 8}, ("gptj",))],
            min_ceiling=0.85, each=True)


class Plan(unittest.TestCase):
    def test_one_run_an_op_with_its_baseline_and_each_shape_once(self):
        lines = targets.plan([GEMV, dict(GEMV, name="again", rungs=["v5", "v1"]), ROPE])
        self.assertEqual(lines, [("w4a16_gemm", "v4,v5,cublas,v1", "M=1,N=64,K=64"),
                                 ("rope", "v2", "tokens=8;tokens=8,gptj")])

    def test_the_issues_targets_plan_every_op_once(self):
        ops = [op for op, _, _ in targets.plan()]
        self.assertEqual(len(ops), len(set(ops)))
        self.assertIn("fp8_gemm_block", ops)


class Report(unittest.TestCase):
    def test_the_fastest_rung_is_judged_against_the_baseline(self):
        res = [result("w4a16_gemm", "v4", {"M": 1, "N": 64, "K": 64, "K_words": 8, "groups": 1}, 10.0),
               result("w4a16_gemm", "v5", {"M": 1, "N": 64, "K": 64, "K_words": 8, "groups": 1}, 8.0),
               result("w4a16_gemm", "cublas", {"M": 1, "N": 64, "K": 64, "K_words": 8, "groups": 1}, 17.0)]
        rows, met, problems = targets.judge(GEMV, res)
        self.assertEqual(problems, [])
        self.assertTrue(met)  # 17 / 8 = 2.125
        self.assertEqual(rows[0][2], "v5")
        self.assertIn("2.12x", rows[0][3])
        res[2]["timing"]["median_ns"] = 15.0e3  # 1.875x
        self.assertFalse(targets.judge(GEMV, res)[1])

    def test_a_skipped_rung_is_fine_when_another_ran_and_a_failed_one_is_not(self):
        dims = {"M": 1, "N": 64, "K": 64}
        res = [result("w4a16_gemm", "v4", dims, 1.0, status="SKIPPED"), result("w4a16_gemm", "v5", dims, 5.0),
               result("w4a16_gemm", "cublas", dims, 20.0)]
        rows, met, problems = targets.judge(GEMV, res)
        self.assertEqual(problems, [])
        self.assertTrue(met)
        res[0]["status"] = "INCORRECT"
        self.assertEqual(len(targets.judge(GEMV, res)[2]), 1)

    def test_a_missing_baseline_or_rung_is_a_problem_and_a_miss(self):
        res = [result("w4a16_gemm", "v4", {"M": 1, "N": 64, "K": 64}, 5.0)]
        _, met, problems = targets.judge(GEMV, res)
        self.assertFalse(met)
        self.assertEqual(len(problems), 2)  # v5 missing, the baseline missing
        _, problems = targets.report(res, [GEMV])
        self.assertTrue(problems)

    def test_ceiling_targets_use_the_calibrated_ceiling_and_flags_tell_problems_apart(self):
        res = [result("rope", "v2", {"tokens": 8}, 5.0, fraction=0.90),
               result("rope", "v2", {"tokens": 8}, 6.0, flags=("gptj",), fraction=0.80, camel=True)]
        rows, met, problems = targets.judge(ROPE, targets.snake(res))  # as load() gives them
        self.assertEqual(problems, [])
        self.assertEqual([r[5] for r in rows], [True, False])
        self.assertIn("90.0%", rows[0][3])
        self.assertIn("6.00 us", rows[1][3])  # the camelCase median was read
        self.assertFalse(met)  # "each": every problem must meet it
        self.assertTrue(targets.judge(dict(ROPE, each=False), targets.snake(res))[1])  # otherwise the first problem is judged

    def test_a_rerun_replaces_the_earlier_result_and_the_report_reads_jsonl(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "targets.jsonl"
            res = [result("rope", "v2", {"tokens": 8}, 5.0, fraction=0.70),
                   result("rope", "v2", {"tokens": 8}, 5.0, fraction=0.86),
                   result("rope", "v2", {"tokens": 8}, 5.0, flags=("gptj",), fraction=0.87)]
            path.write_text("".join(json.dumps(r) + "\n" for r in res))
            lines, problems = targets.report(targets.load([path]), [ROPE])
        self.assertEqual(problems, [])
        self.assertIn("rope 85%: MET", lines)
        self.assertTrue(any("86.0%" in line for line in lines))


if __name__ == "__main__":
    unittest.main()
