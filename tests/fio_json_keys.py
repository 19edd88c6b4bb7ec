#!/usr/bin/env python3
# fio_json_keys.py [--strict] FIO.json LLMIO.json: every key of fio's JSON document (its top
# level, its first job, its disk_util entries) is in llmio's of the same job, with fio's JSON
# type (numbers alike, integer or not); the keys docs/fio.md lists as not measured are left out,
# and so are the values of "job options".  --strict: the exact JSON type (an integer where fio
# writes one), every "job options" value text, and no percentiles or bins where fio writes
# none.  Prints what differs; exit 1 when anything does.  Used by tests/cli_fio_compat.sh,
# tests/cli_fio_conformance.sh and tests/cli_fio_tools.sh (not a test itself).
import json, sys
strict = sys.argv[1] == "--strict"
fio, ll = (json.load(open(p)) for p in sys.argv[1 + strict:3 + strict])
# fio keys llmio does not measure (docs/fio.md lists them); any other fio key must be there,
# with fio's type
NOT_MEASURED = {"global options", "eta", "majf", "minf", "iodepth_level", "iodepth_submit",
                "iodepth_complete", "latency_ns", "latency_us", "latency_ms", "latency_depth",
                "latency_target", "latency_percentile", "latency_window", "short_ios",
                "drop_ios", "bw_agg", "read_merges", "write_merges", "read_ticks",
                "write_ticks", "in_queue", "util"}
bad = []
def num(v): return isinstance(v, (int, float)) and not isinstance(v, bool)
def same_type(a, b): return type(a) == type(b) or (not strict and num(a) and num(b))
def walk(f, l, path, idle=False):
    for k, v in f.items():
        if k in NOT_MEASURED:
            continue
        if path.endswith("job options"):
            if strict and k in l and type(l[k]) is not str:
                bad.append("%s.%s: %r is not text" % (path, k, l[k]))
            continue
        # a direction with no I/O has no percentiles or bins in either tool's JSON; fio's can
        # have some where llmio's has none: a write job's verify read-back, which fio counts
        # in its reads and llmio does not (docs/fio.md, verify)
        if idle and k in ("percentile", "bins") and k not in l:
            continue
        if k not in l:
            bad.append("missing " + path + "." + k)
        elif not same_type(v, l[k]):
            bad.append("type of %s.%s: fio %s, llmio %s" % (path, k, type(v).__name__, type(l[k]).__name__))
        elif isinstance(v, dict) and k not in ("percentile", "bins"):
            walk(v, l[k], path + "." + k,
                 idle or (isinstance(l[k], dict) and l[k].get("total_ios", 1) == 0))
    if strict and not path.endswith(("_ns", "job options")):
        for k in ("percentile", "bins"):
            if k in l and k not in f:
                bad.append("%s.%s: fio writes none here" % (path, k))
walk({k: v for k, v in fio.items() if k not in ("jobs", "disk_util")}, ll, "")
walk(fio["jobs"][0], ll["jobs"][0], "jobs[0]")
for u in fio.get("disk_util", []):
    for l in ll["disk_util"]:
        walk(u, l, "disk_util[]")
print("\n".join(bad))
sys.exit(1 if bad else 0)
