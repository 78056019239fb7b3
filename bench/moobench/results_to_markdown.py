#!/usr/bin/env python3
"""Prints the Markdown tables docs/PERFORMANCE.md shows from a `sonde bench
--json` result, so that the figures there are copied from a run, not typed.
    python3 bench/moobench/results_to_markdown.py RESULT.json"""
import json
import sys


def main(path):
    r = json.load(open(path))
    floor = r["floor_ns"]
    m = r["machine"]
    print(f"Machine: {m.get('cpu_model')}, {m.get('cores_online')} cores, {m.get('kernel')}, "
          f"clock source {m.get('clock_source')}, invariant TSC {m.get('tsc_invariant')}, "
          f"{m.get('compiler')}, {m.get('flags')}; load average at start {m.get('load_average')}; "
          f"{r['loops']} loops; one rdtsc {r['timestamp_ns']:.2f} ns, floor (two) {floor:.2f} ns.\n")
    for p in r["points"]:
        w = p["workload"]
        print(f"**{p['experiment']}: {p['label']}** ({w['calls']:,} calls x {w['threads']} thread(s), "
              f"depth {w['depth']}, method time {w['method_time_ns']} ns; ns per monitored call)\n")
        print("| Configuration | Median | Q1–Q3 | Min | Mean ± 95% CI | Median over T | "
              "Median over T / floor | Written / produced | Bytes/event |")
        print("|---|---|---|---|---|---|---|---|---|")
        t = next((c for c in p["configurations"] if c["name"] == "T" and "skipped" not in c), None)
        for c in p["configurations"]:
            if "skipped" in c:
                print(f"| {c['name']} | skipped: {c['skipped']} | | | | | | | |")
                continue
            s = c["summary"]
            over = s["median_ns"] - t["summary"]["median_ns"] if t else float("nan")
            counts = f"{c['records_written']:,} / {c['records_produced']:,}" if c["writes"] else "–"
            bpe = f"{c['bytes_per_event']:.2f}" if c["bytes_per_event"] > 0 else "–"
            ratio = f"{over / floor:.2f}" if c["name"] not in ("T",) else "–"
            print(f"| {c['name']} | {s['median_ns']:.2f} | {s['q1_ns']:.2f}–{s['q3_ns']:.2f} | "
                  f"{s['min_ns']:.2f} | {s['mean_ns']:.2f} ± {s['ci95_ns']:.2f} | {over:.2f} | "
                  f"{ratio} | {counts} | {bpe} |")
        d = p["decomposition"]
        if "I_ns" in d:
            ws = ", ".join(f"W({k}) {v:.2f}" for k, v in d.get("W_ns", {}).items())
            print(f"\nMooBench decomposition (means, ns per monitored call): I {d['I_ns']:.2f}, "
                  f"C {d.get('C_ns', float('nan')):.2f}, {ws}.")
        for sonde_name, peers in p["peer_ratios"].items():
            txt = ", ".join(f"{k} {v:.2f}x" for k, v in peers.items())
            print(f"\nPeer overhead (mean over T) / {sonde_name} overhead: {txt}.")
        print()
    for name, f in r.get("depth_scaling", {}).items():
        print(f"Depth scaling {name}: from means {f['slope_ns_per_level']:.2f} ns per level, "
              f"R² {f['r2']:.4f}; from medians {f['median_slope_ns_per_level']:.2f} ns per level, "
              f"R² {f['median_r2']:.4f}; median overhead per trace by depth "
              + ", ".join(f"{int(d)}: {v:.0f} ns" for d, v in zip(f['depths'], f['median_overhead_per_trace_ns'])))


if __name__ == "__main__":
    main(sys.argv[1])
