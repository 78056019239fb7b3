#!/usr/bin/env python3
"""How far each case of a scenario run lay from its requirement.

    python3 scenarios/requirement_margins.py RUN... [--edge 1.25]

RUN is a directory that scenarios/run.sh wrote (RUN/cases.txt,
RUN/<case>/report.json). For every case it reads Performance Problem's
evidence (each service's percentile against its requirement at the load
the node judged) and prints the largest ratio percentile / requirement,
its service and the case's label for Performance Problem ("problem",
"none", or "-" where the case labels it neither way).

A case whose largest ratio lies within [1/EDGE, EDGE] is marked "edge":
its planted service sat at its requirement in that run, so whether the
requirement was violated (and with it the label of Performance Problem,
and of Continuously Violated Requirements and everything below it) turned
on the run's noise, not on the planted problem. The shop's tc12e and tc15
went wrong that way (docs/diagnose/parameters.md, twenty-first result).
The mark reads the ground truth of a case, not the diagnosis: every case
is still scored as it came out. EDGE 1.25 is a reading convention (a
quarter either way), not a parameter of the diagnosis.

Exits 1 when a case of RUN/cases.txt has no readable report or no
Performance Problem evidence with a requirement.
"""
import json
import os
import sys

from edge_shares import at_edge, parse_runs, labels  # shared with the other readers


def largest_ratio(report):
    """(ratio, service, experiment) of the service farthest over (or
    least under) its requirement, or None without such evidence."""
    best = None
    for row in report.get("root", {}).get("evidence", []):
        values = row.get("values", {})
        if "percentile_ms" not in values or not values.get("threshold_ms"):
            continue
        ratio = values["percentile_ms"] / values["threshold_ms"]
        experiment = row.get("data", "").split(",")[0]
        if best is None or ratio > best[0]:
            best = (ratio, row.get("location", "?"), experiment)
    return best


def main(argv):
    args = parse_runs(argv, __doc__, "requirement_margins", "a ratio")
    failed = False
    edge_cases = []
    print("run\tcase\tlabel\tP/requirement\tservice\texperiment\tedge")
    for run in args.runs:
        cases_file = os.path.join(run, "cases.txt")
        if not os.path.isfile(cases_file):
            print(f"requirement_margins: {cases_file}: no such file", file=sys.stderr)
            failed = True
            continue
        name = os.path.basename(os.path.normpath(run))
        for case, label in labels(cases_file, "performance_problem").items():
            path = os.path.join(run, case, "report.json")
            try:
                with open(path) as f:
                    best = largest_ratio(json.load(f))
            except (OSError, ValueError) as e:
                print(f"requirement_margins: {path}: {e}", file=sys.stderr)
                failed = True
                continue
            if best is None:
                print(f"requirement_margins: {path}: no Performance Problem evidence with a "
                      "requirement", file=sys.stderr)
                failed = True
                continue
            ratio, service, experiment = best
            edge = at_edge(ratio, args.edge)
            if edge:
                edge_cases.append(f"{name}/{case}")
            shown = {"yes": "problem", "no": "none"}.get(label, "-")
            print(f"{name}\t{case}\t{shown}\t{ratio:.2f}\t{service}\t{experiment}\t"
                  f"{'edge' if edge else ''}")
    print(f"{len(edge_cases)} case(s) within [{1 / args.edge:.2f}, {args.edge:.2f}] of their "
          f"requirement" + (": " + ", ".join(edge_cases) if edge_cases else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
