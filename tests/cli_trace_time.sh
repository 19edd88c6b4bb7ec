#!/bin/bash
# cli_trace_time.sh: a trace over time, live.  A Python program (traced by llmio, phases marked
# with python/llmio_phase.py) reads a file in a tight loop in phase "load", reads a little
# between sleeps in phase "train", and writes a burst in phase "checkpoint".
#   - verdicts: load and checkpoint I/O-bound, train compute-bound, with the numbers (in calls
#     + between = span; the sleeps, 20 x 30 ms, are at least in train's between);
#   - the time series: summed over its bins, each phase's bytes and calls equal the phase's
#     totals, each process's its totals, in the JSON and in the CSV files of -o DIR; the
#     chart is drawn where gnuplot is installed;
#   - -o DIR's report.html holds the text report and the charts inline (one file).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
[ -n "$PY" ] || skip_all "no python3 to run the traced program"

dd if=/dev/zero of="$T/data" bs=1M count=8 status=none
cat >"$T/prog.py" <<'PYEOF'
import os, sys, time
import llmio_phase
d = sys.argv[1]
# load and checkpoint: large calls on one reused buffer, many of them, so that the time in calls
# dwarfs the loop's and a time slice lost to another program (a busy machine) falls in a call
# about as often as the calls' share of the time: one preemption cannot turn the verdict
buf = bytearray(1 << 20)
with llmio_phase.phase("load"):
    for _ in range(32):
        with open(os.path.join(d, "data"), "rb", buffering=0) as f:
            while f.readinto(buf):
                pass
with llmio_phase.phase("train"):
    fd = os.open(os.path.join(d, "data"), os.O_RDONLY)
    for i in range(20):
        os.pread(fd, 4096, i * 4096)
        time.sleep(0.03)
    os.close(fd)
with llmio_phase.phase("checkpoint"):
    fd = os.open(os.path.join(d, "ckpt"), os.O_WRONLY | os.O_CREAT, 0o644)
    block = b"c" * (1 << 20)
    for _ in range(64):
        os.write(fd, block)
    os.fsync(fd)
    os.close(fd)
PYEOF

run env PYTHONPATH="$SRC/python" "$LLMIO" trace -q -o "$T/t.trace" -- "$PY" "$T/prog.py" "$T"
check "traced (exit $RC)" [ "$RC" -eq 0 ]
llmio trace report "$T/t.trace" --json
check "report --json (exit $RC)" [ "$RC" -eq 0 ]
cp "$T/stdout" "$T/r.json"
llmio trace report "$T/t.trace" -o "$T/plots"
check "report -o (exit $RC)" [ "$RC" -eq 0 ]
cp "$T/stdout" "$T/r.txt"

check "verdicts: load and checkpoint I/O-bound, train compute-bound" python3 - "$T/r.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["time"]["phases"]
for name, want in (("load", "I/O-bound"), ("checkpoint", "I/O-bound"), ("train", "compute-bound")):
    p = t[name]
    assert p["verdict"] == want, (name, p["verdict"], {k: p[k] for k in p if k != "series"})
    assert abs(p["in_calls_s"] + p["between_s"] - p["span_s"]) < 1e-6, (name, p)
    assert 0 <= p["io_share"] <= 1 and p["threads"] == 1, (name, p)
assert t["train"]["between_s"] >= 20 * 0.03 * 0.95, t["train"]
PY
check "text: the verdict table" grep -qE '^  train +1 .* compute-bound$' "$T/r.txt"
check "time series (JSON): per phase and per process, the bins add up to the totals" \
	python3 - "$T/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tm = r["time"]
assert tm["bins"] >= 1 and tm["bin_s"] > 0, tm["bins"]
keys = (("read_bytes", "bytes_read"), ("write_bytes", "bytes_written"),
        ("read_calls", "read_calls"), ("write_calls", "write_calls"))
for name, p in r["phases"].items():
    s = tm["phases"][name]["series"]
    for sk, pk in keys:
        assert len(s[sk]) == tm["bins"], (name, sk)
        assert sum(s[sk]) == p[pk], (name, sk, sum(s[sk]), p[pk])
for pid, p in r["processes"].items():
    s = tm["processes"][pid]
    for sk, pk in keys:
        assert sum(s[sk]) == p["totals"][pk], (pid, sk)
assert r["phases"]["load"]["bytes_read"] == 32 * 8 * 1024 * 1024, r["phases"]["load"]["bytes_read"]
PY
check "time series (CSV): the same sums, per phase and per process" python3 - "$T/r.json" \
	"$T/plots" <<'PY'
import csv, json, sys
r = json.load(open(sys.argv[1]))
for fname, key, totals in (("timeseries_phases.csv", "phase", {k: v for k, v in r["phases"].items()}),
                           ("timeseries_processes.csv", "pid", {k: v["totals"] for k, v in r["processes"].items()})):
    sums = {}
    for row in csv.DictReader(open(sys.argv[2] + "/" + fname)):
        s = sums.setdefault(row[key], [0, 0, 0, 0])
        for i, c in enumerate(("read_bytes", "write_bytes", "read_calls", "write_calls")):
            s[i] += int(row[c])
    for k, tot in totals.items():
        want = [tot["bytes_read"], tot["bytes_written"], tot["read_calls"], tot["write_calls"]]
        assert sums.get(k, [0, 0, 0, 0]) == want, (fname, k, sums.get(k), want)
PY
if command -v gnuplot >/dev/null; then
	check "the chart: PNG and SVG" test -s "$T/plots/timeseries.png" -a -s "$T/plots/timeseries.svg"
	check "report.html: self-contained (the text report, four charts inline, no file named)" \
		python3 - "$T/plots/report.html" <<'PY'
import re, sys
h = open(sys.argv[1]).read()
assert h.startswith("<!DOCTYPE html>") and h.rstrip().endswith("</html>"), h[:80]
assert h.count("<svg") == 4, h.count("<svg")
assert not re.search(r'(src|href)="(?!#|data:|http://www\.w3\.org)', h), re.findall(r'(?:src|href)="[^"]*"', h)[:5]
assert "compute-bound" in h and "bytes over files" in h
PY
fi
expect_out "the report names its page" "the report with its charts: $T/plots/report.html"

finish
