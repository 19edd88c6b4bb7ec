#!/usr/bin/env python3
"""Writes the fixture sweep journals of the report and advisor tests (tests/cli_report.sh).

    python3 tests/data/make_journals.py tests/data

Deterministic: the committed .jsonl files are exactly what this prints.  The numbers are
chosen so that the answers are known (see the comments and tests/cli_report.sh):
  inference      io_uring sqpoll=1 (p99 120 us at QD 4) over io_uring (140 us)
  training       libaio (recipe phase "train", 2.2 GB/s) over io_uring (2.0)
  checkpointing  libaio (recipe phase "checkpoint", 2.0 GB/s) over io_uring (1.5)
  model loading  io_uring (recipe phase "load", 3.2 GB/s) over libaio (2.7)
and psync randread 4k QD 1 merges to a p99 of 1003.5 us though each repeat alone says
100, 100 and 3000 us (median 100).

classes.jsonl (tests/cli_advise.sh, "like with like" and "every pattern"): large reads where
mmap through the page cache (12.7 GB/s, the device read 0.5 % of the bytes; an older record
without a verdict, so the reader derives it) and psync buffered (9 GB/s, a record that carries
"service": "page-cache") are far faster than O_DIRECT io_uring (3.2) and libaio (2.8): the
device answer must be io_uring, the page-cache answer mmap.  Then one pattern per advisor class
that used to feed none: randrw (libaio 1.5 over io_uring 1.2 GB/s), randwrite (io_uring 2.0
over libaio 1.6), randread 1m (io_uring 2.5 over psync 1.0), read 16k (io_uring 0.9 over psync
0.5) and write 16k (libaio 0.7 over psync 0.4).
"""
import json
import sys

LIN, SUB, MAXE = 7, 6, 47
NB = (1 << LIN) + (MAXE - LIN + 1) * (1 << SUB)


def hidx(v):
    if v < (1 << LIN):
        return v
    e = v.bit_length() - 1
    if e > MAXE:
        return NB - 1
    return (1 << LIN) + ((e - LIN) << SUB) + ((v >> (e - SUB)) & ((1 << SUB) - 1))


def fnv(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


REPEAT_SCALE = (0.98, 1.0, 1.03)  # median = the nominal value


def lat_buckets(a_us, p99_us, tail=None):
    """10000 I/Os: half at a, 40% at 1.3a, then the tail; nearest-rank p99 = p99_us."""
    a = int(a_us * 1000)
    if tail is None:
        tail = [(2 * a, 850), (int(p99_us * 1000), 100), (int(3 * p99_us * 1000), 50)]
    vals = [(a, 5000), (int(1.3 * a), 4000)] + tail
    pairs = {}
    for v, c in vals:
        pairs[hidx(v)] = pairs.get(hidx(v), 0) + c
    lo, hi = min(v for v, _ in vals), max(v for v, _ in vals)
    return sorted([i, c] for i, c in pairs.items()), lo, hi, sum(c for _, c in vals)


def op(bw, iops, runtime_s, buckets=None):
    o = {"io_bytes": int(bw * runtime_s), "bw_bytes": bw, "iops": iops,
         "runtime": runtime_s * 1000, "total_ios": int(iops * runtime_s),
         "slat_ns": {"min": 0, "max": 0, "mean": 0, "N": 0}}
    if buckets:
        pairs, lo, hi, n = buckets
        o["clat_ns"] = {"min": lo, "max": hi, "mean": 0, "N": n, "percentile": {}}
    else:
        o["clat_ns"] = {"min": 0, "max": 0, "mean": 0, "N": 0, "percentile": {}}
    o["lat_ns"] = o["clat_ns"]
    return o


def job(engine, opts, rw, bs, qd, nj, bw, iops, gbpc, lat, end_fsync=False, direct=True):
    is_write = "write" in rw
    b = lat_buckets(*lat) if len(lat) == 2 else lat
    jo = {"ioengine": engine, "rw": rw, "bs": bs, "iodepth": qd, "numjobs": nj, "direct": direct,
          "fsync": 0, "end_fsync": end_fsync}
    if opts:
        jo["engine_opts"] = opts
    rd = op(0 if is_write else bw, 0 if is_write else iops, 10, None if is_write else b)
    wr = op(bw if is_write else 0, iops if is_write else 0, 10, b if is_write else None)
    hist = {"scheme": "log-linear: linear_bits=7 sub_bits=6, ns",
            "read": {"clat_ns": [] if is_write else b[0], "lat_ns": []},
            "write": {"clat_ns": b[0] if is_write else [], "lat_ns": []}}
    return {"jobname": engine, "error": 0, "interrupted": False, "job options": jo,
            "read": rd, "write": wr, "cpu": {"cores_busy": bw / 1e9 / gbpc},
            "gb_per_s_per_core": gbpc, "engine_notes": "", "histogram": hist}


def record(out, point, points, repeat, config, workload, phases, error=None):
    cfg = dict(config, repeat=repeat)
    canon = ";".join("%s=%s" % (k, cfg[k]) for k in sorted(cfg))
    rec = {"llmio": "0.1.0", "record": "point", "config_hash": fnv(canon),
           "sweep": {"file": "fixture.ini", "section": "fixture", "point": point,
                     "points": points, "repeat": repeat},
           "config": cfg, "workload": workload,
           "host": {"hostname": "fixture-host", "kernel": "6.1.0", "cpu_model": "Fixture CPU",
                    "online_cpus": 2},
           "cache_dropped": False,
           "steady_state": {"enabled": False, "reached": False, "metric": "iops",
                            "window_s": 0, "tolerance_pct": 0, "min_s": 0, "max_s": 0,
                            "measured_s": 10},
           "start_epoch_ms": 1767225600000 + 20000 * point, "wall_s": 10, "phases": phases}
    if error:
        rec["error"] = error
        rec["phases"] = []
    out.append(json.dumps(rec, separators=(",", ":")))


ENG = [("psync", ""), ("libaio", ""), ("io_uring", ""), ("io_uring", "sqpoll=1")]


def plain(out, idx, engine, opts, rw, bs, qd, bw, iops, gbpc, lat, end_fsync=False,
          repeats=3, special=None):
    cfg = {"ioengine": engine, "rw": rw, "bs": bs, "iodepth": qd, "numjobs": 1, "direct": 1}
    if opts:
        k, v = opts.split("=")
        cfg[k] = int(v)
    if end_fsync:
        cfg["end_fsync"] = 1
    for r in range(repeats):
        s = REPEAT_SCALE[r] if repeats == 3 else 1.0
        l = special[r] if special else lat
        j = job(engine, opts, rw, bs, qd, 1, bw * s, iops * s, gbpc, l, end_fsync)
        record(out, idx[0], 0, r, cfg, "job", [{"name": "run", "wall_s": 10, "jobs": [j]}])
        idx[0] += 1


def sweep():
    out, idx = [], [0]
    # inference slice: randread 4k over QD
    iops = {"psync": (10e3, 10e3, 10e3), "libaio": (11e3, 40e3, 120e3),
            "io_uring": (12e3, 45e3, 140e3), "io_uring sqpoll=1": (14e3, 50e3, 150e3)}
    p99 = {"psync": (100, 100, 100), "libaio": (120, 150, 300), "io_uring": (110, 140, 280),
           "io_uring sqpoll=1": (90, 120, 250)}
    gbpc = {"psync": 0.3, "libaio": 0.8, "io_uring": 0.9, "io_uring sqpoll=1": 0.5}
    # psync QD 1: three repeats whose merged p99 (1003.5 us) is none of their median
    a = 30000
    psync_tails = [lat_buckets(30, 100), lat_buckets(30, 100),
                   lat_buckets(30, 0, [(2 * a, 550), (1000000, 300), (3000000, 150)])]
    for e, o in ENG:
        name = e + (" " + o if o else "")
        for k, qd in enumerate((1, 4, 16)):
            plain(out, idx, e, o, "randread", 4096, qd, iops[name][k] * 4096, iops[name][k],
                  gbpc[name], (30, p99[name][k]),
                  special=psync_tails if (e == "psync" and qd == 1) else None)
    # IOPS vs bs at QD 16 (4k is above)
    for e, o in ENG[1:3]:
        name = e
        for bs, f, lf in ((16384, 0.8, 1.5), (65536, 0.4, 3.0)):
            n = iops[name][2] * f
            plain(out, idx, e, o, "randread", bs, 16, n * bs, n, gbpc[name] * 2,
                  (30 * lf, p99[name][2] * lf))
    # large sequential reads over QD
    seq = {"psync": ((1.0, 1.0), 2.0), "libaio": ((1.5, 2.5), 4.0),
           "io_uring": ((1.6, 3.0), 4.5), "io_uring sqpoll=1": ((1.6, 2.6), 2.5)}
    for e, o in ENG:
        name = e + (" " + o if o else "")
        for k, qd in enumerate((1, 8)):
            bw = seq[name][0][k] * 1e9
            plain(out, idx, e, o, "read", 1048576, qd, bw, bw / 1048576, seq[name][1],
                  (400, 2000))
    # checkpoint-like writes
    for e, o, g in (("psync", "", 1.0), ("libaio", "", 2.0), ("io_uring", "", 1.8)):
        plain(out, idx, e, o, "write", 1048576, 8, g * 1e9, g * 1e9 / 1048576, 3.0,
              (800, 4000), end_fsync=True)
    # a failed point
    record(out, idx[0], 0, 0, {"ioengine": "io_uring", "rw": "randread", "bs": 4096,
                               "iodepth": 32, "numjobs": 1, "direct": 1, "iopoll": 1},
           "job", [], {"code": -95, "message": "iopoll needs a device with poll queues"})
    idx[0] += 1
    # a recipe: pretrain with three phases, on two datapaths
    phases = {"io_uring": {"load": (2.0, 3.2), "train": (10.0, 2.0), "checkpoint": (3.0, 1.5)},
              "libaio": {"load": (2.4, 2.7), "train": (10.5, 2.2), "checkpoint": (2.5, 2.0)}}
    shape = {"load": ("read", 1048576, 8), "train": ("read", 262144, 4),
             "checkpoint": ("write", 1048576, 8)}
    for e in ("io_uring", "libaio"):
        cfg = {"workload": "pretrain", "model": "llama3-8b", "ioengine": e, "direct": 1}
        for r in range(3):
            s = REPEAT_SCALE[r]
            ph = []
            for name in ("load", "train", "checkpoint"):
                wall, gbs = phases[e][name]
                rw, bs, qd = shape[name]
                j = job(e, "", rw, bs, qd, 1, gbs * 1e9 * s, gbs * 1e9 * s / bs, 3.0,
                        (300, 1500), end_fsync=(name == "checkpoint"))
                ph.append({"name": name, "wall_s": wall * s, "jobs": [j]})
            record(out, idx[0], 0, r, cfg, "pretrain", ph)
            idx[0] += 1
    return out


def cached(out, idx, engine, bw, dev_frac, service):
    """Buffered large reads: the device read dev_frac of the bytes; service None = an older
    record without a verdict (the reader derives it from the device counters)."""
    cfg = {"ioengine": engine, "rw": "read", "bs": 1048576, "iodepth": 1, "numjobs": 1,
           "direct": 0}
    for r in range(3):
        s = REPEAT_SCALE[r]
        j = job(engine, "", "read", 1048576, 1, 1, bw * s, bw * s / 1048576, 4.0, (80, 400),
                direct=False)
        moved = j["read"]["io_bytes"]
        j["device"] = {"known": True, "name": "vda", "fstype": "ext4",
                       "read_bytes": int(moved * dev_frac), "write_bytes": 0}
        if service:
            j["service"] = service
            j["service_reason"] = "device read %.1f%% of the bytes requested" % (dev_frac * 100)
            j["process_io"] = {"known": True, "read_bytes": int(moved * dev_frac),
                               "write_bytes": 0}
        record(out, idx[0], 0, r, cfg, "job", [{"name": "run", "wall_s": 10, "jobs": [j]}])
        idx[0] += 1


def classes():
    out, idx = [], [0]
    cached(out, idx, "mmap", 12.7e9, 0.005, None)
    cached(out, idx, "psync", 9.0e9, 0.01, "page-cache")
    for e, g in (("io_uring", 3.2), ("libaio", 2.8)):
        plain(out, idx, e, "", "read", 1048576, 8, g * 1e9, g * 1e9 / 1048576, 3.0, (400, 2000))
    for rw, bs, qd, engines in (("randrw", 16384, 16, (("libaio", 1.5), ("io_uring", 1.2))),
                                ("randwrite", 131072, 8, (("io_uring", 2.0), ("libaio", 1.6))),
                                ("randread", 1048576, 8, (("io_uring", 2.5), ("psync", 1.0))),
                                ("read", 16384, 8, (("io_uring", 0.9), ("psync", 0.5))),
                                ("write", 16384, 8, (("libaio", 0.7), ("psync", 0.4)))):
        for e, g in engines:
            plain(out, idx, e, "", rw, bs, qd, g * 1e9, g * 1e9 / bs, 2.0, (200, 1000))
    return out


def thin():
    out, idx = [], [0]
    plain(out, idx, "psync", "", "randread", 4096, 1, 10e3 * 4096, 10e3, 0.3, (30, 100),
          repeats=1)
    plain(out, idx, "psync", "", "read", 1048576, 1, 1e9, 1e9 / 1048576, 2.0, (400, 2000),
          repeats=1)
    return out


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    for name, lines in (("sweep.jsonl", sweep()), ("thin.jsonl", thin()),
                        ("classes.jsonl", classes())):
        with open("%s/%s" % (d, name), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
