#!/usr/bin/env python3
"""Tests of scenarios/edge_shares.py on run directories written here, with
the report shape `sonde diagnose` writes (a node's evidence rows and their
values), so each deciding share is known in advance."""
import os
import tempfile
import unittest

from scenario_runs import run_script, write_run

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scenarios",
                      "edge_shares.py")


def ramp_node(services, status="not_detected"):
    """services: name -> (window significances, growth share)."""
    evidence = []
    for name, (significant, share) in services.items():
        for s in significant:
            evidence.append({"location": name, "values": {"significant": s, "mean_before": 1,
                                                          "mean_after": 2}})
        evidence.append({"location": name, "values": {"material": share >= 0.5, "share": share}})
    return {"id": "the_ramp", "status": status, "reason": "r", "evidence": evidence}


def congestion_node(rows, status="not_detected", reason="database CPU at most 3%"):
    """rows: (service, share, growth share, growth significant) per violating load."""
    evidence = [{"location": s, "values": {"service": s, "share": share, "growth_share": g,
                                           "growth_significant": sig, "dominant": share >= 0.5}}
                for s, share, g, sig in rows]
    return {"id": "database_congestion", "status": status, "reason": reason,
            "evidence": evidence}


def write_node_run(root, cases):
    """cases: id -> (labelled present, labelled absent, node); "-" for none."""
    write_run(root, {
        case: ([] if present == "-" else [present], [] if absent == "-" else [absent],
               {"id": "performance_problem", "status": "detected", "children": [node]})
        for case, (present, absent, node) in cases.items()})


def run(*args):
    return run_script(SCRIPT, *args)


class EdgeShares(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_ramp_counts_only_services_significant_in_every_window(self):
        write_node_run(os.path.join(self.dir, "r1"), {
            # the 0.9 service failed a window: never a ramp, so 0.2 decides
            "a": ("-", "the_ramp", ramp_node({"x": ([True, False, True], 0.9),
                                              "y": ([True, True, True], 0.2)})),
            "b": ("the_ramp", "-", ramp_node({"z": ([True, True, True], 0.8)}, "detected")),
        })
        out = run("the_ramp", os.path.join(self.dir, "r1"), "--default", "0.5")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("largest 0.200", out.stdout)
        self.assertIn("smallest 0.800", out.stdout)
        self.assertIn("1x of 0.5: 0.500 inside the gap", out.stdout)
        # 2x by the odds: 2/3 lies inside 0.2..0.8 too; 0.5x: 1/3 as well
        self.assertIn("2x of 0.5: 0.667 inside the gap", out.stdout)

    def test_congestion_takes_the_weakest_load_and_a_significant_rise_only(self):
        write_node_run(os.path.join(self.dir, "r1"), {
            # service s: 0.3 at one load, 0.6 at the other -> 0.3; its rise
            # share 0.9 was not significant, so it does not count
            "n": ("-", "database_congestion",
                  congestion_node([("s", 0.3, 0.9, False), ("s", 0.6, 0.1, True)])),
            # a significant rise counts: max(0.1, 0.7) = 0.7 at both loads
            "p": ("database_congestion", "-",
                  congestion_node([("t", 0.1, 0.7, True), ("t", 0.8, 0.0, False)], "detected",
                                  "database calls take most of the response time")),
            # detected by another rule: shown, left out of the gap
            "q": ("database_congestion", "-",
                  congestion_node([("u", 0.05, 0.0, False)], "detected",
                                  "the database CPU is saturated at 1 violating load(s)")),
        })
        out = run("database_congestion", os.path.join(self.dir, "r1"), "--default", "0.5")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("largest 0.300", out.stdout)
        self.assertIn("labelled yes: 1, smallest 0.700", out.stdout)
        self.assertIn("yes+", out.stdout)
        self.assertIn("2x of 0.5: 0.667 inside the gap", out.stdout)

    def test_overlapping_labels_are_said_so(self):
        write_node_run(os.path.join(self.dir, "r1"), {
            "a": ("-", "the_ramp", ramp_node({"x": ([True, True], 0.7)})),
            "b": ("the_ramp", "-", ramp_node({"z": ([True, True], 0.6)}, "detected")),
        })
        out = run("the_ramp", os.path.join(self.dir, "r1"))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("overlap", out.stdout)

    def test_a_directory_without_cases_is_an_error_naming_it(self):
        out = run("the_ramp", self.dir)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("cases.txt is missing", out.stderr)


if __name__ == "__main__":
    unittest.main()
