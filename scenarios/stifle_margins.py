#!/usr/bin/env python3
"""How far each Stifle-labelled case's repeated statements lay from the
Stifle's noise bound.

    python3 scenarios/stifle_margins.py RUN...

RUN is a directory that scenarios/run.sh wrote (RUN/cases.txt,
RUN/<case>/report.json). The Stifle finds a statement when batching it
would save more of the response time than the measurement error
(`saving_share` > `min_saving_share` in its evidence rows; the_stifle.cpp).
For every case labelled for The Stifle (present or absent) whose node
wrote such rows, it prints:

- `statement`: the largest saving / bound of one statement (the rule as
  it is: above 1 is found);
- `loop`: the largest saving / bound of statements read as one loop:
  those of one experiment repeated equally often per request (their mean
  repetitions equal to 0.01). The evidence does not say which requests a
  statement ran in, so this is a reading of the rows, not a rule: a loop
  that issues three statements per row is batched as one, and its saving
  is the three together.

It marks "edge" where the statement ratio lies within [1/EDGE, EDGE].
From the set after 78c047b The Stifle itself judges a loop's statements
together and writes one row per loop (naming them in
`values.statements`), so there `statement` is the rule as it is, per
loop.
A reading of stored runs (no re-evaluation), for deciding a next set.
Exits 1 when RUN/cases.txt is missing.
"""
import json
import os
import sys
from collections import defaultdict

from edge_shares import at_edge, parse_runs, find, labels


def ratios(node):
    """(statement ratio, loop ratio) of a Stifle node, or None without
    evidence rows that carry a saving and its bound."""
    best = None
    loops = defaultdict(float)
    bounds = {}
    for row in node.get("evidence", []):
        v = row.get("values") or {}
        if "saving_share" not in v or not v.get("min_saving_share"):
            continue
        ratio = v["saving_share"] / v["min_saving_share"]
        best = ratio if best is None else max(best, ratio)
        key = (row.get("data", "").split(",")[0], round(v.get("mean_repetitions", 0), 2))
        loops[key] += v["saving_share"]
        bounds[key] = v["min_saving_share"]
    if best is None:
        return None
    return best, max(loops[k] / bounds[k] for k in loops)


def main(argv):
    args = parse_runs(argv, __doc__, "stifle_margins", "a statement ratio")
    print("run\tcase\tlabel\tstatus\tstatement\tloop\tedge")
    edges = 0
    for run in args.runs:
        cases_file = os.path.join(run, "cases.txt")
        if not os.path.exists(cases_file):
            sys.exit(f"stifle_margins: {cases_file} is missing (is {run} a scenarios/run.sh output?)")
        for case, label in sorted(labels(cases_file, "the_stifle").items()):
            path = os.path.join(run, case, "report.json")
            if label == "-" or not os.path.exists(path):
                continue
            with open(path) as f:
                node = find(json.load(f)["root"], "the_stifle")
            found = ratios(node) if node else None
            if found is None:
                continue
            statement, loop = found
            edge = at_edge(statement, args.edge)
            edges += edge
            print(f"{os.path.basename(os.path.normpath(run))}\t{case}\t{label}\t{node['status']}\t"
                  f"{statement:.2f}\t{loop:.2f}\t{'edge' if edge else ''}")
    print(f"{edges} case(s) with a statement ratio within [{1 / args.edge:.2f}, {args.edge:.2f}]")


if __name__ == "__main__":
    main(sys.argv[1:])
