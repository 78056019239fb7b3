#!/usr/bin/env python3
"""Turns bench/real/run.sh's raw measurements into results.md, results.json
and results.csv (all in the results directory given as the only argument).

Inputs in DIR: runs.tsv (round, program, config, key, value), machine.txt
(key=value), checks/PROGRAM-CONFIG.{check.txt,traces.json,summary.json,...}.
"""
import csv
import json
import os
import re
import statistics
import sys
from collections import defaultdict

CONFIGS = ["plain", "noop", "sonde-null", "sonde", "sonde-cull", "sonde-cull-again", "sonde-profile",
           "uftrace", "lttng"]
BASE = "noop"
# program -> [(metric key, column title, higher is better, unit)]
METRICS = {
    "leveldb": [("fillseq", "fillseq ops/s", True, "ops/s"),
                ("readrandom", "readrandom ops/s", True, "ops/s")],
    "sqlite": [("total", "speedtest1 total s (lower is better)", False, "s")],
    "redis": [("SET", "SET req/s", True, "req/s"), ("GET", "GET req/s", True, "req/s"),
              ("SET_P16", "SET -P 16 req/s", True, "req/s"),
              ("GET_P16", "GET -P 16 req/s", True, "req/s")],
}
TITLES = {
    "leveldb": "leveldb `db_bench --benchmarks=fillseq,readrandom --num={leveldb_num}`",
    "sqlite": "sqlite `speedtest1 --size {sqlite_size}` (a database file)",
    "redis": ("redis `redis-benchmark -t set,get -n {redis_n} -c 20 -q`, then the same with `-P 16` "
              "(16 commands per round trip), against the measured redis-server"),
}
FUNTRACE = ("funtrace: not measured. It is not packaged in Debian (nor in any registry this "
            "benchmark may use): it is built from its own source repository with its own "
            "compiler wrappers and runtime, which this Debian-packages-only benchmark cannot fetch.")
HEX = re.compile(r"^0x[0-9a-fA-F]+$")


def fmt(v, unit=""):
    if v is None:
        return "–"
    if unit == "s":
        return f"{v:.3f}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def to_num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def main():
    out = sys.argv[1]
    machine = {}
    with open(os.path.join(out, "machine.txt")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            machine[k] = v
    runs = defaultdict(dict)   # (round, program, config) -> {key: value}
    errors = []
    warnings = []
    with open(os.path.join(out, "runs.tsv")) as f:
        rd = csv.DictReader(f, delimiter="\t")
        for row in rd:
            key = (int(row["round"]), row["program"], row["config"])
            # Round 0: the profiling run of sonde-profile, not a measurement
            # (its errors still count).
            if key[0] == 0 and row["key"] not in ("error", "warning"):
                continue
            if row["key"] == "error":
                errors.append({"round": key[0], "program": key[1], "config": key[2],
                               "error": row["value"]})
                runs[key].setdefault("errors", []).append(row["value"])
            elif row["key"] == "warning":
                warnings.append({"round": key[0], "program": key[1], "config": key[2],
                                 "warning": row["value"]})
            else:
                runs[key][row["key"]] = row["value"]
    programs = [p for p in METRICS if any(k[1] == p for k in runs)]
    label = {c: machine.get("label_" + c, c) for c in CONFIGS}
    skip = {c: machine["skip_" + c] for c in CONFIGS if "skip_" + c in machine}

    # Per program, configuration and metric: the values of all rounds.
    agg = {}
    for p in programs:
        for c in CONFIGS:
            for m, _, higher, unit in METRICS[p]:
                vals = [to_num(v.get("metric:" + m)) for (r, pp, cc), v in sorted(runs.items())
                        if pp == p and cc == c]
                vals = [x for x in vals if x is not None]
                agg[(p, c, m)] = {
                    "values": vals,
                    "median": statistics.median(vals) if vals else None,
                    "min": min(vals) if vals else None,
                    "max": max(vals) if vals else None,
                    "unit": unit,
                    "higher_is_better": higher,
                }
    # Throughput relative to the no-op-hook build (ratio of medians; a time
    # becomes a throughput by inverting it): 1.00 = as fast as no-op hooks.
    for (p, c, m), a in agg.items():
        b = agg.get((p, BASE, m), {}).get("median")
        a["relative_to_noop"] = None
        if a["median"] and b:
            a["relative_to_noop"] = a["median"] / b if a["higher_is_better"] else b / a["median"]

    def per_run(p, c, key):
        return [to_num(v.get(key)) for (r, pp, cc), v in sorted(runs.items())
                if pp == p and cc == c and to_num(v.get(key)) is not None]

    # Log sizes per monitored call: bytes on disk over the calls sonde's native
    # run counted in the same round (enter + exit events / 2; the workloads
    # are deterministic up to background threads and the event loop).
    sizes = {}
    for p in programs:
        calls_by_round = {r: to_num(v.get("events_written")) / 2
                          for (r, pp, cc), v in runs.items()
                          if pp == p and cc == "sonde" and to_num(v.get("events_written"))}
        row = {"calls": statistics.median(calls_by_round.values()) if calls_by_round else None}
        for c in ("sonde", "sonde-cull", "uftrace", "lttng"):
            bpc = []
            for (r, pp, cc), v in runs.items():
                if pp != p or cc != c or to_num(v.get("log_bytes")) is None:
                    continue
                calls = calls_by_round.get(r) or row["calls"]
                if calls:
                    bpc.append(to_num(v["log_bytes"]) / calls)
            row[c] = statistics.median(bpc) if bpc else None
            row[c + "_bytes"] = statistics.median(per_run(p, c, "log_bytes")) if per_run(p, c, "log_bytes") else None
        uf = per_run(p, "uftrace", "uftrace_records")
        row["uftrace_calls_own"] = statistics.median(uf) / 2 if uf else None
        cull = per_run(p, "sonde-cull", "events_written")
        row["cull_calls"] = statistics.median(cull) / 2 if cull else None
        disc = per_run(p, "lttng", "lttng_discarded")
        row["lttng_discarded_max"] = max(disc) if disc else None
        lostp = per_run(p, "lttng", "lttng_lost_packets")
        row["lttng_lost_packets_max"] = max(lostp) if lostp else None
        sizes[p] = row

    # The sonde log checks.
    checks = {}
    for p in programs:
        for c in ("sonde-null", "sonde", "sonde-cull", "sonde-cull-again", "sonde-profile"):
            if c in skip:
                continue
            written = per_run(p, c, "events_written")
            lost = per_run(p, c, "events_lost")
            ch = {"rounds_with_exit_line": len(written), "events_written_median": statistics.median(written) if written else None,
                  "events_lost_max": max(lost) if lost else None, "notes": []}
            wns = per_run(p, c, "writer_ns_per_event")
            ch["writer_ns_per_event_median"] = statistics.median(wns) if wns else None
            waited = per_run(p, c, "probes_waited_ms")
            ch["probes_waited_ms_median"] = statistics.median(waited) if waited else None
            v1 = runs.get((1, p, c), {})
            for k in ("check_note",):
                if k in v1:
                    ch["notes"].append(v1[k])
            base = os.path.join(out, "checks", f"{p}-{c}")
            if c != "sonde-null" and os.path.exists(base + ".check.txt"):
                txt = open(base + ".check.txt").read()
                ch["check_rc"] = to_num(v1.get("check_rc"))
                counts = {m.group(2): int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+(\S+)$", txt, re.M)}
                flow = sum(n for t, n in counts.items() if ".flow.trace.operation." in t)
                ch["flow_records_read"] = flow
                ch["before"] = counts.get("kieker.common.record.flow.trace.operation.BeforeOperationEvent")
                ch["after"] = counts.get("kieker.common.record.flow.trace.operation.AfterOperationEvent", 0) + \
                    counts.get("kieker.common.record.flow.trace.operation.AfterOperationFailedEvent", 0)
                ch["after_failed"] = counts.get("kieker.common.record.flow.trace.operation.AfterOperationFailedEvent", 0)
                m = re.search(r"^lost events reported by the monitor: (\d+)", txt, re.M)
                ch["lost_in_log"] = int(m.group(1)) if m else None
                w1 = to_num(v1.get("events_written"))
                ch["events_written_round1"] = w1
                ch["written_equals_read"] = (w1 is not None and w1 == flow)
            if os.path.exists(base + ".traces.json"):
                ch["traces_rc"] = to_num(v1.get("traces_rc"))
                ch["traces_cost"] = v1.get("traces_cost")
                try:
                    tj = json.load(open(base + ".traces.json"))
                    ch["traces"] = tj.get("traces")
                    ch["invalid_traces"] = tj.get("invalid_traces")
                    ch["traces_errors"] = tj.get("errors")
                except (ValueError, OSError) as e:
                    ch["traces_errors"] = [f"unreadable output: {e}"]
            if os.path.exists(base + ".summary.json"):
                ch["summary_rc"] = to_num(v1.get("summary_rc"))
                ch["summary_cost"] = v1.get("summary_cost")
                try:
                    sj = json.load(open(base + ".summary.json"))
                    tr = sj.get("traces", {})
                    ch["summary_traces"] = tr.get("total")
                    ch["summary_invalid"] = tr.get("invalid")
                    ch["invalid_reasons"] = [f"{x.get('traces')} x {x.get('kind')}: {x.get('example', '')[:160]}"
                                             for x in tr.get("invalid_reasons", [])]
                    ch["summary_errors"] = sj.get("log", {}).get("errors")
                    ops = sj.get("operations", [])
                    calls = sum(o.get("count", 0) for o in ops)
                    hexops = [o for o in ops if HEX.match(o.get("operation", ""))]
                    hexcalls = sum(o.get("count", 0) for o in hexops)
                    ch["operations"] = len(ops)
                    ch["unresolved_operations"] = len(hexops)
                    ch["unresolved_call_share"] = hexcalls / calls if calls else None
                    ch["unresolved_examples"] = [o["operation"] for o in sorted(hexops, key=lambda o: -o.get("count", 0))[:5]]
                    ch["top_operations"] = [o["operation"] for o in sorted(ops, key=lambda o: -o.get("count", 0))[:5]]
                except (ValueError, OSError) as e:
                    ch["summary_errors"] = [f"unreadable output: {e}"]
            checks[f"{p}/{c}"] = ch

    # --- markdown ---
    md = []
    md.append("# Real-program benchmark: sonde against no-op hooks, uftrace and LTTng-UST\n")
    md.append(f"Command: `{machine.get('command', '')}`  ")
    md.append(f"Date: {machine.get('date', '')}; {machine.get('rounds')} rounds, configurations interleaved "
              f"(each round runs every configuration once, starting at a different one); "
              f"figures are the median and the range (min–max) over the rounds.\n")
    md.append(f"Machine: {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, Linux {machine.get('kernel', '?')}, "
              f"{machine.get('os', '?')}, gcc {machine.get('gcc', '?')}; load average "
              f"{machine.get('loadavg_start', '?')} at the start, {machine.get('loadavg_end', '?')} at the end"
              f" (measuring took {machine.get('measure_s', '?')} s).  ")
    md.append(f"sonde: {machine.get('sonde_commit', '?')} (`{machine.get('sonde', '')}`); "
              f"{machine.get('uftrace', 'uftrace ?')}; {machine.get('lttng', 'lttng ?')}.  ")
    md.append("Sources (Debian 12): " + ", ".join(f"{k[4:]} {v}" for k, v in machine.items() if k.startswith("src_")) + ".  ")
    md.append(f"Build flags (dpkg-buildflags, all variants): `{machine.get('cflags', '')}`, link `{machine.get('ldflags', '')}`; "
              f"instrumented variant adds `{machine.get('instr', '')}`.\n")
    if machine.get("quick") == "1":
        md.append("**--quick run: small sizes and few rounds; the figures are noisy.** ")
    md.append("A shared, busy machine gives noisy absolute figures; compare configurations "
              "within one run, by their medians and ranges.\n")

    md.append("## Throughput relative to the no-op-hook build\n")
    md.append("Median throughput of each configuration divided by the median of the same "
              "`-finstrument-functions` binary with glibc's empty hooks (1.00 = no-op hooks; "
              "0.25 = a quarter of their throughput; for speedtest1 the inverse of its total time).\n")
    cols = [(p, m, title) for p in programs for (m, title, _, _) in METRICS[p]]
    md.append("| Configuration | " + " | ".join(f"{p} {t.split(' (')[0]}" for p, m, t in cols) + " |")
    md.append("|---|" + "---:|" * len(cols))
    for c in CONFIGS:
        if c in skip:
            md.append(f"| {label[c]} | " + " | ".join("n/a" for _ in cols) + " |")
            continue
        cells = []
        for p, m, _ in cols:
            r = agg[(p, c, m)]["relative_to_noop"]
            cells.append(f"{r:.2f}" if r is not None else "failed")
        md.append(f"| {label[c]} | " + " | ".join(cells) + " |")
    md.append("| funtrace | " + " | ".join("not measured" for _ in cols) + " |")
    md.append("")
    for c in CONFIGS:
        if c in skip:
            md.append(f"- {label[c]}: {skip[c]}.")
    md.append(f"- {FUNTRACE}\n")

    for p in programs:
        md.append("## " + TITLES[p].format(**machine) + "\n")
        hdr = "| Configuration |"
        sep = "|---|"
        for m, title, _, _ in METRICS[p]:
            hdr += f" {title}: median | range | rel. |"
            sep += "---:|---:|---:|"
        md.append(hdr)
        md.append(sep)
        for c in CONFIGS:
            if c in skip:
                md.append(f"| {label[c]} |" + " n/a | | |" * len(METRICS[p]))
                continue
            row = f"| {label[c]} |"
            for m, _, _, unit in METRICS[p]:
                a = agg[(p, c, m)]
                if a["median"] is None:
                    row += " failed | | |"
                    continue
                rel = a["relative_to_noop"]
                row += (f" {fmt(a['median'], unit)} | {fmt(a['min'], unit)}–{fmt(a['max'], unit)} | "
                        f"{rel:.2f} |" if rel is not None else f" {fmt(a['median'], unit)} | | |")
            md.append(row)
        md.append("")

    md.append("## Log size per monitored call\n")
    md.append("Bytes on disk divided by the monitored calls of the workload, i.e. the calls sonde's native "
              "run counted in the same round (events written / 2); uftrace's own count (its records / 2) "
              "is shown as a cross-check. LTTng runs in its default discard mode: its discarded events "
              "(from `lttng stop`) are shown; its size is over the same call count.\n")
    md.append("| Program | monitored calls | sonde native B/call | sonde --cull B/call (calls kept) | uftrace B/call | uftrace calls (own count) | LTTng B/call | LTTng discarded events / lost packets (max) |")
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for p in programs:
        s = sizes[p]
        cull = "n/a" if "sonde-cull" in skip else f"{fmt(s['sonde-cull'])} ({fmt(s['cull_calls'])})"
        md.append(f"| {p} | {fmt(s['calls'])} | {fmt(s['sonde'])} | {cull} | {fmt(s['uftrace'])} | "
                  f"{fmt(s['uftrace_calls_own'])} | {fmt(s['lttng'])} | {fmt(s['lttng_discarded_max'])} / {fmt(s['lttng_lost_packets_max'])} |")
    md.append("")

    md.append("## sonde log checks\n")
    md.append("Every round: the exit summary line (`sonde: N events written, M lost`). First round's log: "
              "`sonde check` (read completely; flow records read = events written), `sonde summary --format "
              "json` (traces reconstructed; invalid traces; operation names resolved, i.e. not a raw `0x…` "
              "address) and, in a full run, `sonde traces --summary --json` on the native log.\n")
    md.append("| Program / configuration | exit line (rounds) | events written (median) | lost (max) | writer ns/event, probes waited ms (medians) | read back = written | traces (invalid) | unresolved names | readers: exit, time, peak memory |")
    md.append("|---|---:|---:|---:|---:|---|---|---|---|")
    for key, ch in checks.items():
        rb = "–"
        if "flow_records_read" in ch:
            rb = ("yes" if ch.get("written_equals_read") else
                  f"**no**: {fmt(ch.get('flow_records_read'))} read, {fmt(ch.get('events_written_round1'))} written")
            if ch.get("before") is not None and ch.get("after") is not None and ch["before"] != ch["after"]:
                rb += f"; {ch['before'] - ch['after']} calls never returned"
            if ch.get("after_failed"):
                rb += f"; {ch['after_failed']} closed as failed"
        tr = "–"
        if "traces" in ch:
            tr = f"{ch.get('traces')} ({ch.get('invalid_traces')})"
            if "summary_traces" in ch and (ch.get("summary_traces") != ch.get("traces") or
                                           ch.get("summary_invalid") != ch.get("invalid_traces")):
                tr += f"; **summary differs**: {ch.get('summary_traces')} ({ch.get('summary_invalid')})"
        elif "summary_traces" in ch:
            tr = f"{ch.get('summary_traces')} ({ch.get('summary_invalid')})"
        un = "–"
        if ch.get("operations") is not None:
            share = ch.get("unresolved_call_share")
            un = f"{ch['unresolved_operations']} of {ch['operations']} operations"
            if share is not None:
                un += f", {100 * share:.1f} % of calls"
        cost = []
        for cmd in ("traces", "summary"):
            if cmd + "_rc" in ch:
                rc = ch[cmd + "_rc"]
                cost.append(f"{cmd}: {'ok' if rc == 0 else f'**exit {fmt(rc)}**'}, {ch.get(cmd + '_cost', '')}")
        cost = "; ".join(cost) or "–"
        lost = ch.get("events_lost_max")
        lost_s = fmt(lost) if lost in (None, 0) else f"**{fmt(lost)}**"
        wr = f"{fmt(ch.get('writer_ns_per_event_median'))}, {fmt(ch.get('probes_waited_ms_median'))}"
        md.append(f"| {key} | {ch['rounds_with_exit_line']} | {fmt(ch['events_written_median'])} | {lost_s} | {wr} | {rb} | {tr} | {un} | {cost} |")
    md.append("")
    for key, ch in checks.items():
        for n in ch.get("notes", []):
            md.append(f"- {key}: {n}")
        for r in ch.get("invalid_reasons", []) or []:
            md.append(f"- {key}: invalid: {r}")
        for e in (ch.get("traces_errors") or []) + (ch.get("summary_errors") or []):
            md.append(f"- {key}: reader error: {e}")
        if ch.get("unresolved_examples"):
            md.append(f"- {key}: unresolved, most called: {', '.join(ch['unresolved_examples'])}")
    md.append("")
    if errors:
        md.append("## Errors\n")
        for e in errors:
            md.append(f"- round {e['round']}, {e['program']}, {label.get(e['config'], e['config'])}: {e['error']}")
        md.append("")
    if warnings:
        md.append("## Warnings\n")
        for e in warnings:
            md.append(f"- round {e['round']}, {e['program']}, {label.get(e['config'], e['config'])}: {e['warning']}")
        md.append("")
    md.append("Raw figures: `runs.tsv` (one line per measurement), `results.csv` (per program, configuration "
              "and metric), `results.json` (everything above).\n")

    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["program", "config", "label", "metric", "unit", "higher_is_better", "median", "min", "max",
                    "relative_to_noop", "values"])
        for (p, c, m), a in agg.items():
            if c in skip:
                continue
            w.writerow([p, c, label[c], m, a["unit"], a["higher_is_better"], a["median"], a["min"], a["max"],
                        a["relative_to_noop"], " ".join(str(x) for x in a["values"])])
    result = {
        "machine": machine,
        "skipped": skip,
        "funtrace": FUNTRACE,
        "throughput": [{"program": p, "config": c, "label": label[c], "metric": m, **a}
                       for (p, c, m), a in agg.items() if c not in skip],
        "log_size_per_call": sizes,
        "checks": checks,
        "errors": errors,
        "warnings": warnings,
        "runs": [{"round": r, "program": p, "config": c, **v} for (r, p, c), v in sorted(runs.items())],
    }
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(result, f, indent=2, sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    main()
