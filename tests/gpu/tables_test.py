#!/usr/bin/env python3
"""tables.py's README merge on synthetic rows: a run of some ops replaces their rows and keeps the
others with their dates, laid out by the new header; no GPU needed (CTest label unit)."""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # noqa: E402

OLD = """<!-- kbench:results:begin -->

Measured 2026-11-30 on NVIDIA H200 through coordinator, CUDA worker and client.

| op | variant | shape | dtype | median (us) | check |
| --- | --- | --- | --- | ---: | --- |
| rmsnorm | v7 | 32768x4096 | bf16 | 141.3 | ok |
| layernorm | v3 | 32768x4096 | bf16 | 150.0 | ok |

Timing accuracy: something else

| op | x |
| --- | --- |
| rmsnorm | 1 |
"""

NEW = ["| op | variant | shape | dtype | median (us) | GB/s | check |",
       "| --- | --- | --- | --- | ---: | ---: | --- |",
       "| layernorm | v3 | 32768x4096 | bf16 | 145.6 | 3688 | ok |"]


class MergeRows(unittest.TestCase):
    def test_a_partial_run_keeps_the_other_rows_with_their_date(self):
        rows = tables.merge_rows(OLD, NEW, 4, "2026-12-02")
        self.assertEqual(rows[0], NEW[0] + " measured |")
        self.assertEqual(len(rows), 4, rows)  # header, separator, the kept rmsnorm row, the new layernorm row
        self.assertEqual(rows[2], "| rmsnorm | v7 | 32768x4096 | bf16 | 141.3 | - | ok | 2026-11-30 |")
        self.assertEqual(rows[3], NEW[2] + " 2026-12-02 |")
        self.assertFalse(any("150.0" in r for r in rows))  # the replaced row is gone
        self.assertFalse(any("| rmsnorm | 1 |" in r for r in rows))  # the second table is not a row

    def test_a_dated_table_keeps_each_rows_own_date(self):
        once = "\n".join(tables.merge_rows(OLD, NEW, 4, "2026-12-02"))
        again = tables.merge_rows(once, ["| op | variant | shape | dtype | median (us) | GB/s | check |",
                                         "| --- | --- | --- | --- | ---: | ---: | --- |"], 4, "2026-12-03")
        self.assertIn("| rmsnorm | v7 | 32768x4096 | bf16 | 141.3 | - | ok | 2026-11-30 |", again)
        self.assertIn(NEW[2] + " 2026-12-02 |", again)

    def test_another_table_kind_is_not_merged(self):
        gemm = ["| variant | shape | dtype | median (us) |", "| --- | --- | --- | ---: |", "| cublas | 4096 | bf16 | 1 |"]
        self.assertEqual(len(tables.merge_rows(OLD, gemm, 3, "2026-12-02")), 3)


if __name__ == "__main__":
    unittest.main()
