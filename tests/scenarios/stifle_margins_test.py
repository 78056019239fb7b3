#!/usr/bin/env python3
"""Tests of scenarios/stifle_margins.py on run directories written here
with the evidence rows The Stifle writes."""
import os
import tempfile
import unittest

from scenario_runs import printed_rows, run_script, write_run

HERE = os.path.dirname(os.path.abspath(__file__))
MARGINS = os.path.join(HERE, "..", "..", "scenarios", "stifle_margins.py")


def stifle_row(statement, saving, bound, repetitions, experiment="single-u1"):
    return {"location": statement, "data": f"experiment '{experiment}' (1 users), n=100 database calls",
            "values": {"found": saving > bound, "saving_share": saving, "min_saving_share": bound,
                       "mean_repetitions": repetitions, "time_share": saving}}


def write_stifle_run(root, cases):
    """cases: id -> (label 'yes', 'no' or '-', status, [stifle rows])."""
    write_run(root, {
        case: (["performance_problem"] + (["the_stifle"] if label == "yes" else []),
               ["the_stifle"] if label == "no" else [],
               {"id": "performance_problem", "status": "detected", "evidence": [],
                "children": [{"id": "the_stifle", "status": status, "reason": "r",
                              "evidence": rows}]})
        for case, (label, status, rows) in cases.items()})


def run(*args):
    return run_script(MARGINS, *args)


def table(out):
    """case -> (label, status, statement ratio, loop ratio, edge)."""
    return {case: (c[2], c[3], float(c[4]), float(c[5]), c[6])
            for case, c in printed_rows(out).items()}


class StifleMargins(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run_dir = os.path.join(self.tmp.name, "tickets-1")
        write_stifle_run(self.run_dir, {
            # Three statements of one loop (540 per request), each under the bound.
            "a": ("yes", "not_detected", [stifle_row("s1", 0.035, 0.07, 538.55),
                                          stifle_row("s2", 0.027, 0.07, 538.55),
                                          stifle_row("s3", 0.026, 0.07, 538.55),
                                          stifle_row("s4", 0.001, 0.07, 3.49)]),
            # One clear statement; a second repeated a different number of times.
            "b": ("yes", "detected", [stifle_row("s1", 0.5, 0.05, 50.0),
                                      stifle_row("s2", 0.02, 0.05, 3.0)]),
            "c": ("no", "not_detected", [stifle_row("s1", 0.018, 0.05, 4.0)]),
            "d": ("-", "detected", [stifle_row("s1", 0.5, 0.05, 50.0)]),
            "e": ("yes", "detected", []),
            "f": ("yes", "detected", [stifle_row("s1", 0.055, 0.05, 10.0)]),
        })

    def tearDown(self):
        self.tmp.cleanup()

    def test_statement_and_loop_ratios_per_labelled_case(self):
        r = run(self.run_dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = table(r.stdout)
        self.assertEqual(rows["a"], ("yes", "not_detected", 0.5, 1.26, ""))
        self.assertEqual(rows["b"], ("yes", "detected", 10.0, 10.0, ""))
        self.assertEqual(rows["c"], ("no", "not_detected", 0.36, 0.36, ""))
        self.assertEqual(rows["f"], ("yes", "detected", 1.1, 1.1, "edge"))
        # Unlabelled cases and nodes without saving rows are left out.
        self.assertNotIn("d", rows)
        self.assertNotIn("e", rows)
        self.assertTrue(r.stdout.rstrip().endswith("1 case(s) with a statement ratio within [0.80, 1.25]"))

    def test_a_wider_edge_takes_more_cases(self):
        rows = table(run(self.run_dir, "--edge", "2.5").stdout)
        self.assertEqual(rows["a"][4], "edge")
        self.assertEqual(rows["c"][4], "")

    def test_a_folder_without_cases_file_is_an_error(self):
        r = run(self.tmp.name)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cases.txt is missing", r.stderr)

    def test_an_edge_of_one_or_less_is_refused(self):
        r = run(self.run_dir, "--edge", "1")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--edge must be above 1", r.stderr)


if __name__ == "__main__":
    unittest.main()
