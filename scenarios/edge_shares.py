#!/usr/bin/env python3
"""Where a share threshold sits in the data of stored scenario runs.

    python3 scenarios/edge_shares.py NODE RUN... [--default X]

NODE is one of the share rules below; RUN is a directory that
scenarios/run.sh wrote (RUN/cases.txt, RUN/<case>/report.json). For every
case where NODE was examined, it prints the value at which the rule would
turn for that case (the case's deciding share) and the case's label for
NODE, then the largest share among cases labelled not-NODE, the smallest
among cases labelled NODE, and the middle of that gap in log-odds. With
--default, it also says whether the default and its 0.5x and 2x (scaled by
the odds, as `sonde diagnose --sensitivity` scales a share) lie in the gap.

The rules and their deciding share per case:
  the_ramp             min_growth_share: the largest growth share (first to
                       last window, of the last window's mean) among the
                       services whose every window lies significantly above
                       the first (a service that fails a window is never a
                       ramp, whatever its share)
  database_congestion  min_call_share (rule 3, an in-process database): per
                       service the smallest, over its violating loads, of
                       the larger of its database share and (when the rise
                       was significant) its share of the rise; the largest
                       over the services. Rules 1 and 2 (CPU, locks) may
                       decide a case too: a case they detected is shown
                       as "yes+" and left out of the gap (rule 3 did not
                       have to turn it)
  traffic_jam          min_growth_share (services that violate alone): the
                       largest fitted growth share among them

These are readings of stored runs whose labels are known: a value chosen
from them is a training observation, and the docs say so.
"""
import argparse
import json
import math
import os
import sys


def add_edge_option(parser, what):
    """--edge EDGE (default 1.25) for the margin readers: WHAT within
    [1/EDGE, EDGE] is at the edge."""
    parser.add_argument("--edge", type=float, default=1.25,
                        help=f"{what} within [1/EDGE, EDGE] is at the edge (default 1.25)")


def check_edge(args, program):
    """Exit naming PROGRAM when the parsed --edge is not above 1."""
    if args.edge <= 1:
        sys.exit(f"{program}: --edge must be above 1")


def parse_runs(argv, doc, program, what):
    """The margin readers' command line: RUN... and --edge (for `what`)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="RUN")
    add_edge_option(parser, what)
    args = parser.parse_args(argv)
    check_edge(args, program)
    return args


def at_edge(ratio, edge):
    return 1 / edge <= ratio <= edge


def labels(cases_file, node):
    out = {}
    with open(cases_file) as f:
        for line in f:
            if not line.strip() or line.startswith("#") or "|" not in line:
                continue
            cols = [c.strip() for c in line.split("|")]
            if len(cols) < 5:
                continue
            present, absent = cols[3].split(), cols[4].split()
            out[cols[0]] = "yes" if node in present else ("no" if node in absent else "-")
    return out


def find(n, node):
    if n.get("id") == node:
        return n
    for c in n.get("children", []):
        hit = find(c, node)
        if hit:
            return hit
    return None


def ramp_share(n):
    services = {}
    for e in n.get("evidence", []):
        v = e.get("values") or {}
        s = services.setdefault(e.get("location"), {"all_significant": True, "share": None})
        if "material" in v:
            s["share"] = v["share"]
        elif "significant" in v and not v["significant"]:
            s["all_significant"] = False
    shares = [s["share"] for s in services.values() if s["all_significant"] and s["share"] is not None]
    return max(shares) if shares else None


def call_share(n):
    per_service = {}
    for e in n.get("evidence", []):
        v = e.get("values") or {}
        if "growth_share" not in v or "dominant" not in v:
            continue
        best = max(v["share"], v["growth_share"] if v["growth_significant"] else -math.inf)
        per_service.setdefault(v["service"], []).append(best)
    mins = [min(x) for x in per_service.values()]
    return max(mins) if mins else None


def jam_share(n):
    shares = [e["values"]["growth_share"] for e in n.get("evidence", [])
              if (e.get("values") or {}).get("violates_alone")]
    return max(shares) if shares else None


def decided_by_call_time(n):
    # Rule 3's reason; rules 1 and 2 word theirs by the CPU or the locks.
    return n.get("status") != "detected" or n.get("reason", "").startswith("database calls take")


RULES = {"the_ramp": ramp_share, "database_congestion": call_share, "traffic_jam": jam_share}


def logit(p):
    return math.log(p / (1 - p))


def odds_scaled(x, factor):
    o = factor * x / (1 - x)
    return o / (1 + o)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("node", choices=sorted(RULES))
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--default", type=float)
    args = ap.parse_args()
    rows = []
    for run in args.runs:
        cases_file = os.path.join(run, "cases.txt")
        if not os.path.exists(cases_file):
            sys.exit(f"edge_shares: {cases_file} is missing (is {run} a scenarios/run.sh output?)")
        label = labels(cases_file, args.node)
        for case in sorted(label):
            path = os.path.join(run, case, "report.json")
            if not os.path.exists(path):
                continue
            with open(path) as f:
                n = find(json.load(f)["root"], args.node)
            if not n or n.get("status") == "skipped":
                continue
            share = RULES[args.node](n)
            if share is None:
                continue
            lab = label[case]
            if lab == "yes" and args.node == "database_congestion" and not decided_by_call_time(n):
                lab = "yes+"
            rows.append((share, lab, run, case, n["status"], n.get("reason", "")[:70]))
    rows.sort()
    for share, lab, run, case, status, reason in rows:
        print(f"{share:8.3f}  {lab:4s}  {os.path.basename(run.rstrip('/')):18s} {case:6s} {status:12s} {reason}")
    neg = [r[0] for r in rows if r[1] == "no"]
    pos = [r[0] for r in rows if r[1] == "yes"]
    if not neg or not pos:
        print("no gap: the runs hold no case labelled", "yes" if not pos else "no")
        return
    hi_neg, lo_pos = max(neg), min(pos)
    print(f"\nlabelled no: {len(neg)} cases, largest {hi_neg:.3f}; labelled yes: {len(pos)}, smallest {lo_pos:.3f}")
    if hi_neg >= lo_pos or hi_neg <= 0 or lo_pos >= 1:
        print("the labels overlap or leave (0, 1): no threshold separates them")
        return
    mid = 1 / (1 + math.exp(-(logit(hi_neg) + logit(lo_pos)) / 2))
    print(f"gap {hi_neg:.3f}..{lo_pos:.3f}, {logit(lo_pos) - logit(hi_neg):.2f} wide in log-odds "
          f"(0.5x..2x spans {2 * math.log(2):.2f}); its middle {mid:.3f}")
    if args.default is not None:
        for factor in (0.5, 1, 2):
            x = odds_scaled(args.default, factor)
            inside = hi_neg < x <= lo_pos
            print(f"  {factor:g}x of {args.default:g}: {x:.3f} {'inside the gap' if inside else 'OUTSIDE the gap'}")


if __name__ == "__main__":
    main()
