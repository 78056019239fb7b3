#!/usr/bin/env python3
"""Re-evaluates a stored scenario run: every case's data judged again by the
current heuristics, then scored against the labels.

    python3 scenarios/reevaluate.py RUN CASES OUT [NODE.PARAM=VALUE ...]

RUN is a directory that scenarios/run.sh wrote (RUN/<case>/data,
RUN/<case>/config.json), CASES its cases file (scenarios/cases.txt or
scenarios/ledger/cases.txt), OUT where the new reports go (OUT/<case>/).
NODE.PARAM=VALUE overrides a heuristic parameter for this evaluation
(e.g. one_lane_bridge.single_user_floor_ms=5). Each case is judged with
the default hierarchy and the requirements its run was made with. Prints
`sonde diagnose --accuracy`'s table and exits with its status (4: some
label wrong). A figure from this is a re-evaluation of stored data, not a
fresh run (scenarios/README.md). The sonde binary is build/release's, or
the one the environment variable SONDE names.
"""
import concurrent.futures
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SONDE = os.environ.get("SONDE", os.path.join(HERE, "..", "build", "release", "src", "cli", "sonde"))


def overrides(args):
    out = {}
    for arg in args:
        key, _, value = arg.partition("=")
        node, _, param = key.partition(".")
        if not node or not param or not value:
            sys.exit(f"reevaluate.py: '{arg}' is not NODE.PARAM=VALUE")
        out.setdefault(node, {})[param] = float(value)
    return out


def apply(node, changes, found):
    if node.get("id") in changes:
        node.setdefault("params", {}).update(changes[node["id"]])
        found.add(node["id"])
    for child in node.get("children", []):
        apply(child, changes, found)


def case_ids(cases):
    with open(cases) as f:
        return [line.split("|")[0].strip() for line in f if line.strip() and not line.startswith("#")]


def judge(run, out, hierarchy, case):
    data = os.path.join(run, case, "data")
    if not os.path.isdir(data):
        return case, f"no data ({data})"
    with open(os.path.join(run, case, "config.json")) as f:
        requirements = json.load(f).get("requirements", {})
    h = json.loads(json.dumps(hierarchy))
    if "default" in requirements:
        h["requirement"] = requirements["default"]
    if "services" in requirements:
        h["services"] = requirements["services"]
    os.makedirs(os.path.join(out, case), exist_ok=True)
    path = os.path.join(out, case, "hierarchy.json")
    with open(path, "w") as f:
        json.dump(h, f)
    r = subprocess.run([SONDE, "diagnose", "--data", data, "--hierarchy", path, "--out",
                        os.path.join(out, case)], capture_output=True, text=True)
    return case, "judged" if r.returncode == 0 else f"sonde exited {r.returncode}: {r.stderr.strip()[-300:]}"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    run, cases, out = sys.argv[1:4]
    changes = overrides(sys.argv[4:])
    hierarchy = json.loads(subprocess.check_output([SONDE, "diagnose", "--print-default-hierarchy"]))
    found = set()
    apply(hierarchy["hierarchy"], changes, found)
    if set(changes) - found:
        sys.exit(f"reevaluate.py: no node {sorted(set(changes) - found)} in the default hierarchy")
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for case, status in pool.map(lambda c: judge(run, out, hierarchy, c), case_ids(cases)):
            print(f"{case}: {status}", flush=True)
    return subprocess.run([SONDE, "diagnose", "--accuracy", cases, "--out", out]).returncode


if __name__ == "__main__":
    sys.exit(main())
