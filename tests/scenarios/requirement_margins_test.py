#!/usr/bin/env python3
"""Tests of scenarios/requirement_margins.py, and of the requirement rows
scenarios/keep_labels.py keeps for it, on run directories written here
with the evidence rows Performance Problem writes."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from scenario_runs import printed_rows, run_script, write_run

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, "..", "..", "scenarios")
MARGINS = os.path.join(SCENARIOS, "requirement_margins.py")
KEEP = os.path.join(SCENARIOS, "keep_labels.py")


def requirement_row(service, percentile_ms, threshold_ms):
    return {"location": service, "data": "experiment 'load-u12' (12 users), n=100",
            "effect_size": percentile_ms / threshold_ms,
            "values": {"percentile": 0.9, "percentile_ms": percentile_ms,
                       "threshold_ms": threshold_ms, "violated": percentile_ms > threshold_ms}}


def write_margins_run(root, cases):
    """cases: id -> (labelled with a problem: True, False or None for
    neither, [(service, P90 ms, requirement ms)])."""
    write_run(root, {
        case: (["performance_problem"] if problem else [],
               ["performance_problem"] if problem is False else [],
               {"id": "performance_problem", "status": "detected", "reason": "r",
                "evidence": [requirement_row(*r) for r in rows] +
                            [{"location": "x", "values": {"other": 1}}],
                "children": [{"id": "application_hiccups", "status": "not_detected",
                              "reason": "r", "evidence": [{"values": {"share": 0.1}}]}]})
        for case, (problem, rows) in cases.items()})


def run(*args):
    return run_script(MARGINS, *args)


def table(out):
    """case -> (label, ratio, service, edge) from the printed rows."""
    return {case: (c[2], float(c[3]), c[4], c[6]) for case, c in printed_rows(out).items()}


class RequirementMargins(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run_dir = os.path.join(self.tmp.name, "shop-1")
        write_margins_run(self.run_dir, {
            "c1": (False, [("GET /a", 0.7, 10), ("GET /b", 0.5, 10)]),
            "c2": (True, [("GET /a", 0.7, 10), ("POST /cart", 10.22, 10)]),
            "c3": (True, [("GET /orders", 7.2, 7.5), ("GET /a", 1.0, 7.5)]),
            "c4": (True, [("GET /a", 1.3, 10), ("GET /search", 37.3, 10)]),
            "c5": (True, [("GET /a", 12.6, 10)]),
            "c6": (None, [("GET /a", 3.0, 10)]),
        })

    def tearDown(self):
        self.tmp.cleanup()

    def test_the_largest_ratio_per_case_and_the_cases_at_the_edge(self):
        r = run(self.run_dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = table(r.stdout)
        self.assertEqual(rows["c1"], ("none", 0.07, "GET /a", ""))
        self.assertEqual(rows["c2"], ("problem", 1.02, "POST /cart", "edge"))
        self.assertEqual(rows["c3"], ("problem", 0.96, "GET /orders", "edge"))
        self.assertEqual(rows["c4"], ("problem", 3.73, "GET /search", ""))
        self.assertEqual(rows["c5"], ("problem", 1.26, "GET /a", ""))
        self.assertEqual(rows["c6"], ("-", 0.3, "GET /a", ""))
        self.assertEqual(r.stdout.splitlines()[-1],
                         "2 case(s) within [0.80, 1.25] of their requirement: "
                         "shop-1/c2, shop-1/c3")

    def test_a_wider_edge_takes_in_more_cases(self):
        r = run(self.run_dir, "--edge", "1.3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(table(r.stdout)["c5"][3], "edge")
        self.assertTrue(r.stdout.splitlines()[-1].startswith("3 case(s) within [0.77, 1.30]"))

    def test_an_edge_not_above_one_is_refused(self):
        r = run(self.run_dir, "--edge", "1")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--edge must be above 1", r.stderr)

    def test_a_case_without_a_report_or_evidence_is_named_and_fails_the_run(self):
        os.remove(os.path.join(self.run_dir, "c4", "report.json"))
        with open(os.path.join(self.run_dir, "c5", "report.json"), "w") as f:
            json.dump({"root": {"id": "performance_problem", "status": "not_detected"}}, f)
        r = run(self.run_dir)
        self.assertEqual(r.returncode, 1)
        self.assertIn("c4/report.json", r.stderr)
        self.assertIn("c5/report.json: no Performance Problem evidence", r.stderr)
        self.assertEqual(set(table(r.stdout)), {"c1", "c2", "c3", "c6"})

    def test_kept_labels_keep_the_requirement_rows_and_nothing_else_of_the_evidence(self):
        kept = os.path.join(self.tmp.name, "kept", "rep1")
        k = subprocess.run([sys.executable, KEEP, self.run_dir, kept], capture_output=True,
                           text=True)
        self.assertEqual(k.returncode, 0, k.stderr)
        with open(os.path.join(kept, "c2", "report.json")) as f:
            root = json.load(f)["root"]
        self.assertEqual([row["location"] for row in root["evidence"]], ["GET /a", "POST /cart"])
        self.assertEqual(root["evidence"][1]["values"],
                         {"percentile": 0.9, "percentile_ms": 10.22, "threshold_ms": 10,
                          "violated": True})
        self.assertNotIn("evidence", root["children"][0])
        full, trimmed = run(self.run_dir), run(kept)
        self.assertEqual(table(full.stdout), table(trimmed.stdout))


if __name__ == "__main__":
    unittest.main()
