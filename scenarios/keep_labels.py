#!/usr/bin/env python3
"""Keeps what a fresh scenario run decided, small enough to commit, so that
repetitions made in different sessions can be scored together.

    python3 scenarios/keep_labels.py RUN DEST

RUN is a directory that scenarios/run.sh wrote (RUN/cases.txt and
RUN/<case>/report.json); DEST gets DEST/cases.txt and DEST/<case>/report.json
holding what `sonde diagnose --accuracy` reads (whether the run was complete,
every node's id and status) and what says why (each node's one-line reason,
the report's warnings, such as a busy machine, and Performance Problem's
rows of each service's percentile against its requirement, which
scenarios/requirement_margins.py reads). The other measurements, charts and
evidence stay in RUN (megabytes per case, not kept). Several DESTs named
SERIES/rep1..repN are scored together with

    sonde diagnose --accuracy SERIES/rep1/cases.txt --out SERIES --repetitions

Exits 1, naming the case, when a case of RUN/cases.txt has no readable report.
"""
import json
import os
import shutil
import sys

from reevaluate import case_ids  # the cases file's ids, as reevaluate.py reads them


def requirement_rows(node):
    """Each service's percentile against its requirement (Performance
    Problem's evidence), a row per service: what says how far the case lay
    from its requirement (scenarios/requirement_margins.py)."""
    rows = []
    for row in node.get("evidence", []):
        values = row.get("values", {})
        if "percentile_ms" in values and "threshold_ms" in values:
            rows.append({"location": row.get("location", ""), "data": row.get("data", ""),
                         "values": {k: values[k] for k in
                                    ("percentile", "percentile_ms", "threshold_ms", "violated")
                                    if k in values}})
    return rows


def labels_only(node):
    kept = {"id": node["id"], "status": node["status"], "reason": node.get("reason", "")}
    rows = requirement_rows(node) if node["id"] == "performance_problem" else []
    if rows:
        kept["evidence"] = rows
    children = [labels_only(c) for c in node.get("children", [])]
    if children:
        kept["children"] = children
    return kept


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    run, dest = argv[1], argv[2]
    cases_file = os.path.join(run, "cases.txt")
    if not os.path.isfile(cases_file):
        sys.exit(f"keep_labels.py: no {cases_file} (is {run} a scenarios/run.sh output?)")
    os.makedirs(dest, exist_ok=True)
    shutil.copyfile(cases_file, os.path.join(dest, "cases.txt"))
    for case in case_ids(cases_file):
        report = os.path.join(run, case, "report.json")
        try:
            with open(report) as f:
                full = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"keep_labels.py: case {case}: cannot read {report}: {e}")
        kept = {
            "complete": full.get("complete", True),
            "warnings": full.get("warnings", []),
            "root": labels_only(full["root"]),
        }
        os.makedirs(os.path.join(dest, case), exist_ok=True)
        with open(os.path.join(dest, case, "report.json"), "w") as f:
            json.dump(kept, f, indent=1)
            f.write("\n")
    print(f"kept the labels of {len(case_ids(cases_file))} cases in {dest}")


if __name__ == "__main__":
    main(sys.argv)
