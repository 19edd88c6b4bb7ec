#!/usr/bin/env python3
"""Points per hour and IOPS differences with and without steady state (docs/sweeps.md).

    python3 examples/sweeps/steady_compare.py compare.jsonl

Reads a journal of examples/sweeps/steady_compare.ini (run with --repeat 2 for the noise
floor): groups the points by ss=off / ss=on, pairs each steady-state point with the
fixed-runtime point of the same configuration and repeat, and the two fixed-runtime repeats
with each other.
"""
import json
import statistics
import sys


def load(path):
    recs = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            try:
                r = json.loads(line)
            except ValueError:
                print(f"{path}: line {no} is torn; ignoring it", file=sys.stderr)
                continue
            if "error" not in r:
                recs.append(r)
    return recs


def iops(r):
    return sum(j["read"]["iops"] + j["write"]["iops"] for p in r["phases"] for j in p["jobs"])


def ident(r):
    return tuple(sorted((k, v) for k, v in r["config"].items()
                        if not k.startswith("ss") and k != "repeat"))


def pct(a, b):
    return abs(iops(a) - iops(b)) / iops(b) * 100


def main():
    recs = load(sys.argv[1])
    by = {(ident(r), r["steady_state"]["enabled"], r["config"]["repeat"]): r for r in recs}
    print("| run | points | points/hour | mean measured s | steady reached |")
    print("| --- | --- | --- | --- | --- |")
    for on in (False, True):
        g = [r for r in recs if r["steady_state"]["enabled"] == on]
        if not g:
            continue
        reached = sum(r["steady_state"]["reached"] for r in g)
        print(f"| {'steady state' if on else 'fixed runtime'} | {len(g)} | "
              f"{3600 * len(g) / sum(r['wall_s'] for r in g):.0f} | "
              f"{statistics.mean(r['steady_state']['measured_s'] for r in g):.1f} | "
              f"{f'{reached}/{len(g)}' if on else '-'} |")
    eff = [pct(r, by[(k, False, rep)]) for (k, on, rep), r in by.items()
           if on and (k, False, rep) in by]
    noise = [pct(by[(k, False, 1)], r) for (k, on, rep), r in by.items()
             if not on and rep == 0 and (k, False, 1) in by]
    if eff:
        print(f"\nsteady state vs fixed runtime, same configuration and repeat: median |IOPS "
              f"difference| {statistics.median(eff):.1f} % ({len(eff)} pairs)")
    if noise:
        print(f"fixed runtime vs fixed runtime (repeat 0 vs 1): median |IOPS difference| "
              f"{statistics.median(noise):.1f} % ({len(noise)} pairs)")


if __name__ == "__main__":
    main()
