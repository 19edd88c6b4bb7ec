#!/usr/bin/env python3
"""Sweep speed and accuracy on the study matrix (examples/sweeps/study_cpu_matrix.ini).

    bench/sweep_speed.py --dir /mnt/disk [--target direct|cache|null|paced] [--sections libaio]
                         [--sample 20] [--before] [--adaptive] [--tolerance 100] [--ramp 0]

- after:  the shipped matrix (steady state on the mean's 95 % interval, 150 ms samples) on the
          default path (page cache dropped only where a point may read through it);
- before (--before): the matrix with the previous settings (ss=iops:20%, 3 one-second samples,
          ss_min 2 s) and --no-reuse (page cache dropped before every point, as root);
- full:   a sample of the points (every k-th of the after run), each at a fixed 6 s (ss=off),
          twice (--repeat 2): the after run's IOPS against the mean of the two, and the two
          against each other (the medium's own run-to-run noise); a fast result is accepted
          when within 5 % of that mean, or within the two full runs' own spread when larger;
- adaptive (--adaptive): `llmio sweep --adaptive --compare --from` the after run's journal: the
          points the search would have run and whether its answers equal the full sweep's.
Targets: direct (the matrix as shipped: O_DIRECT on a 1 GiB file in --dir), cache (buffered,
invalidate=0, --keep-cache, a 256 MiB file read into the page cache and locked there for the
whole run, as bench/vs_fio's Pin does: the CPU path),
null (the null engine: no I/O at all), paced (the null engine at rate_iops=20000 per thread:
a steady source whatever the load, so its points/hour are the sweep machinery's own).
Points per hour include every point's setup and ramp: points x 3600 / the sweep's elapsed
wall time; "setup + teardown" is the median of a point's wall time less its ramp and measured
window, "between points" the median gap from one point's end to the next one's start (the
record and the journal's fsync).  --ramp 0 leaves the study's ramp out, so that what is left
beyond the measured window is the machinery's own.  Prints a Markdown report on stdout.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MATRIX = os.path.join(ROOT, "examples", "sweeps", "study_cpu_matrix.ini")
STEADY_KEYS = ("ss", "ss_window", "ss_min", "ss_max", "ss_interval")


def read_sections(path):
    """[(name, [lines])] of an INI file, comments and continuation lines kept as they are."""
    secs, cur = [], None
    for line in open(path):
        m = re.match(r"^\[(.+)\]\s*$", line)
        if m:
            cur = (m.group(1), [])
            secs.append(cur)
        elif cur:
            cur[1].append(line)
    return secs


def key_of(line):
    m = re.match(r"^([A-Za-z_]+)=", line)
    return m.group(1) if m else None


RAMP = None  # --ramp: the matrix's ramp_time replaced (the machinery without the study's ramp)


def variant(secs, sections, target, steady, extra=()):
    """The matrix's text with [global]'s steady-state keys replaced, for a target."""
    out = []
    for name, lines in secs:
        if name != "global" and sections and name not in sections:
            continue
        out.append("[%s]\n" % name)
        for line in lines:
            k = key_of(line)
            if name == "global" and k in STEADY_KEYS:
                continue
            if target in ("null", "paced") and k in ("filename", "direct"):
                continue
            if target in ("null", "paced") and k == "ioengine":
                line = "ioengine=null\n"
            if target == "cache" and k == "direct":
                line = "direct=0\ninvalidate=0\n"
            if target == "cache" and k == "size":
                line = "size=256m\n"
            if RAMP is not None and k == "ramp_time":
                line = "ramp_time=%s\n" % RAMP
            out.append(line)
        if name == "global":
            if target == "paced":
                out.append("rate_iops=20000\n")
            out.extend(s + "\n" for s in steady)
            out.extend(s + "\n" for s in extra)
    return "".join(out)


def sweep(llmio, ini_text, journal, args, extra_flags=()):
    ini = journal.replace(".jsonl", ".ini")
    with open(ini, "w") as f:
        f.write(ini_text)
    if os.path.exists(journal):
        os.unlink(journal)
    cmd = [llmio, "sweep", ini, "-o", journal, "--dir", args.dir, "-q"] + list(extra_flags)
    if args.target == "cache":
        cmd.append("--keep-cache")  # a buffered point is preceded by a drop otherwise
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        sys.exit("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    return wall, p.stdout


def records(journal):
    return [json.loads(l) for l in open(journal) if l.strip()]


def iops(rec):
    job = rec["phases"][0]["jobs"][0]
    return job["read"]["iops"] + job["write"]["iops"]


def point_key(rec):
    c = rec["config"]
    keys = ("ioengine", "rw", "bs", "iodepth", "numjobs", "sqpoll", "iopoll", "regfiles")
    return tuple(str(c.get(k, "")) for k in keys)


def sample_ini(secs, recs, target, n):
    """One section per sampled point: its own section's keys, its rw, bs, iodepth, numjobs."""
    step = max(1, len(recs) // max(1, n))
    chosen = recs[::step][:n]
    text = variant(secs, {"-"}, target, ["ss=off", "runtime=6s"])
    # [global] only: strip its swept lists, each section sets them
    text = "".join(l for l in text.splitlines(True)
                   if key_of(l) not in ("rw", "bs", "iodepth", "numjobs", "exclude"))
    own = dict(secs)
    for i, r in enumerate(chosen):
        c = r["config"]
        text += "[p%d]\n" % i
        for line in own.get(r["sweep"]["section"], []):
            k = key_of(line)
            if k and not (target in ("null", "paced") and k == "ioengine"):
                text += line
        if target in ("null", "paced"):
            text += "ioengine=null\n"
        for k in ("rw", "bs", "iodepth", "numjobs"):
            text += "%s=%s\n" % (k, c[k])
    return text, chosen


def overheads(recs):
    """Medians of what a point costs beyond its ramp and measured window (setup, teardown,
    the page cache drop), and of the gap from one point's end to the next one's start (its
    record, the journal's fsync)."""
    inside, between = [], []
    for r in recs:
        ramp = r["config"].get("ramp_time", 0) / 1e9
        inside.append(r["wall_s"] - ramp - r["steady_state"]["measured_s"])
    for a, b in zip(recs, recs[1:]):
        between.append(max(0.0, (b["start_epoch_ms"] - a["start_epoch_ms"]) / 1000 - a["wall_s"]))
    return (statistics.median(inside) if inside else 0,
            statistics.median(between) if between else 0)


def rate(n, wall):
    return n * 3600.0 / wall if wall > 0 else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--target", default="direct", choices=("direct", "cache", "null", "paced"))
    ap.add_argument("--sections", default="", help="comma-separated sections (default: all)")
    ap.add_argument("--sample", type=int, default=20)
    ap.add_argument("--before", action="store_true")
    ap.add_argument("--adaptive", action="store_true")
    ap.add_argument("--ss-max", default=None, help="replace ss_max (e.g. 1s) everywhere")
    ap.add_argument("--tolerance", default=None,
                    help="replace both runs' steady-state tolerance: 100 stops every point at its "
                         "first chance, so points/hour are the sweep machinery's ceiling")
    ap.add_argument("--ramp", default=None,
                    help="replace the matrix's ramp_time (e.g. 0): the machinery's own cost "
                         "without the ramp the study asks for")
    ap.add_argument("--llmio", default=os.path.join(ROOT, "build", "llmio"))
    ap.add_argument("--work", default=None, help="where journals go (default: --dir)")
    args = ap.parse_args()
    global RAMP
    RAMP = args.ramp
    work = args.work or args.dir
    secs = read_sections(MATRIX)
    sections = set(s for s in args.sections.split(",") if s)
    shipped = [l.strip() for _, ls in secs[:1] for l in ls if key_of(l) in STEADY_KEYS]
    if args.ss_max:
        shipped = [l for l in shipped if key_of(l) != "ss_max"] + ["ss_max=" + args.ss_max]
    if args.tolerance:
        shipped = [("ss=iops_ci:%s%%" % args.tolerance) if key_of(l) == "ss" else l
                   for l in shipped]
    null = args.target in ("null", "paced")
    tag = os.path.join(work, "sweep-%s-" % args.target)
    load = os.getloadavg()

    # lay the file out (and, for cache, read it into the page cache) before anything is timed
    if not null:
        size = "256m" if args.target == "cache" else "1g"
        subprocess.run([args.llmio, "run", "--ioengine", "psync", "--rw", "read", "--bs", "1m",
                        "--size", size, "--filename", os.path.join(args.dir, "llmio-study.dat"),
                        "--invalidate", "0" if args.target == "cache" else "1"],
                       capture_output=True, check=True)

    pin = None
    if args.target == "cache":
        loader = importlib.machinery.SourceFileLoader(
            "vs_fio", os.path.join(os.path.dirname(os.path.abspath(__file__)), "vs_fio"))
        spec = importlib.util.spec_from_loader("vs_fio", loader)
        vs_fio = importlib.util.module_from_spec(spec)
        loader.exec_module(vs_fio)
        # resident whatever reclaims the page cache meanwhile (released when the script ends)
        pin = vs_fio.Pin(os.path.join(args.dir, "llmio-study.dat"))

    print("## target %s, sections %s\n" % (args.target, args.sections or "all"))
    print("Load average before: %.1f %.1f %.1f on %d CPUs.\n" % (load + (os.cpu_count(),)))
    if pin:
        print("The file stays in the page cache: %s.\n" % (
            "locked (MAP_LOCKED)" if pin.locked else "mapped and touched (locking refused)"))
    print("| run | points | elapsed s | points/hour | s/point | measured s/point | "
          "other s/point | setup + teardown s (median) | between points s (median) | "
          "cache drops | steady reached |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    after_wall, _ = sweep(args.llmio, variant(secs, sections, args.target, shipped),
                          tag + "after.jsonl", args)
    after = records(tag + "after.jsonl")
    ss = [l for l in shipped if key_of(l) == "ss"][0]
    runs = [("after: %s, 150 ms samples, default path" % ss, after, after_wall)]
    if args.before:
        old = ["ss=iops:%s%%" % (args.tolerance or "20"), "ss_window=3s", "ss_min=2s", "ss_max=" + (args.ss_max or "6s")]
        w, _ = sweep(args.llmio, variant(secs, sections, args.target, old),
                     tag + "before.jsonl", args, ["--no-reuse"])
        runs.insert(0, ("before: %s 3 s window, --no-reuse" % old[0], records(tag + "before.jsonl"),
                        w))
    for name, recs, wall in runs:
        reached = sum(1 for r in recs if r["steady_state"]["reached"])
        n = max(1, len(recs))
        measured = sum(r["steady_state"]["measured_s"] for r in recs) / n
        inside, between = overheads(recs)
        # other: ramp, setup, the cache drop, the record and its fsync
        print("| %s | %d | %.0f | %.0f | %.2f | %.2f | %.2f | %.3f | %.3f | %d | %d/%d |" % (
            name, len(recs), wall, rate(len(recs), wall), wall / n, measured,
            wall / n - measured, inside, between, sum(1 for r in recs if r["cache_dropped"]),
            reached, len(recs)))

    text, chosen = sample_ini(secs, after, args.target, args.sample)
    if args.sample:
        sweep(args.llmio, text, tag + "full.jsonl", args, ["--repeat", "2"])
    full = {}
    for r in records(tag + "full.jsonl") if args.sample else []:
        full.setdefault(point_key(r), {})[r["sweep"]["repeat"]] = iops(r)
    if args.sample:
        print("\nFast: the point as the sweep measured it; full 1, full 2: the same point twice "
              "at a fixed 6 s (ss=off).  Accepted: within 5 % of the full runs' mean, or "
              "within the full runs' own spread (|full 1 - full 2| / their mean) when that is "
              "larger.\n")
        print("| point | fast IOPS | full 1 | full 2 | fast vs full mean | full 1 vs full 2 | "
              "within 5 % | within max(5 %, spread) |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    d_fast, d_noise, ok5, ok_spread = [], [], 0, 0
    for r in chosen:
        f = full.get(point_key(r), {})
        if 0 not in f or 1 not in f or not (f[0] + f[1]):
            continue
        mean = (f[0] + f[1]) / 2
        a = abs(iops(r) - mean) / mean * 100
        b = abs(f[1] - f[0]) / mean * 100
        d_fast.append(a)
        d_noise.append(b)
        ok5 += a <= 5
        ok_spread += a <= max(5, b)
        c = r["config"]
        label = "%s %s bs=%s qd=%s nj=%s" % (
            r["sweep"]["section"], c["rw"], c["bs"], c["iodepth"], c["numjobs"])
        print("| %s | %.0f | %.0f | %.0f | %.1f %% | %.1f %% | %s | %s |" % (
            label, iops(r), f[0], f[1], a, b, "yes" if a <= 5 else "no",
            "yes" if a <= max(5, b) else "no"))
    if d_fast:
        print("\nfast vs full mean: median %.1f %%, max %.1f %%; within 5 %%: %d/%d; within "
              "max(5 %%, the full runs' own spread): %d/%d.  Full vs full (the noise floor): "
              "median %.1f %%, max %.1f %%, within 5 %%: %d/%d\n" % (
                  statistics.median(d_fast), max(d_fast), ok5, len(d_fast), ok_spread,
                  len(d_fast), statistics.median(d_noise), max(d_noise),
                  sum(1 for x in d_noise if x <= 5), len(d_noise)))

    if args.adaptive:
        # the search over the after run's records (--from: looked up, not run again), then
        # the rest replayed: the same measurements on both sides of the comparison
        _, out = sweep(args.llmio, variant(secs, sections, args.target, shipped),
                       tag + "adaptive.jsonl", args,
                       ["--adaptive", "--compare", "--from", tag + "after.jsonl"])
        print("`llmio sweep --adaptive --compare --from %s`:\n\n```\n%s```\n"
              % (os.path.basename(tag + "after.jsonl"), out))
    load = os.getloadavg()
    print("Load average after: %.1f %.1f %.1f.\n" % load)


if __name__ == "__main__":
    main()
