#!/bin/bash
# cli_vs_fio.sh: bench/vs_fio's own arithmetic, and its device figures against the tools'.
#
# 1. The iostat figures of a window (requests/s, await, aqu-sz) from two samples of
#    /sys/block/DEV/stat with known differences, and the verdicts of the summary on made-up
#    runs: the off-device time per I/O (Little's law), and an O_DIRECT cell whose IOPS are
#    short while llmio's off-device time is fio's is "device slower, llmio not"; short IOPS
#    with more time off the device, or any page-cache cell, stays "llmio slower".
# 2. With fio installed and the scratch directory on a block device: one O_DIRECT cell run
#    by both tools.  The disk's own counters over each tool's whole run must have seen at
#    least the bytes of the I/Os it reports (O_DIRECT: each I/O reaches the disk; other work
#    on the disk only adds to them).
# 3. As a performance test (perf_vs_fio, make check-perf): also the rates over the sampled
#    window: the disk completed at least 80 % of the requests per second each tool reports,
#    and the time off the device per I/O is within the window below (both need the tools to
#    get a CPU when their I/O completes).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

VS_FIO=$(cd "$(dirname "$0")/.." && pwd)/bench/vs_fio
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "no /usr/bin/python3 (bench/vs_fio's interpreter)"

cat >"$T/unit.py" <<'EOF'
import importlib.machinery
import importlib.util
import sys

loader = importlib.machinery.SourceFileLoader("vs_fio", sys.argv[1])
spec = importlib.util.spec_from_loader("vs_fio", loader)
v = importlib.util.module_from_spec(spec)
loader.exec_module(v)
fails = 0


def check(desc, ok):
    global fails
    print(("ok:   " if ok else "FAIL: ") + desc)
    fails += 0 if ok else 1


# 2 s window: 20000 reads + 2000 writes, 1650 + 550 ms at the device
a = [100, 0, 800, 50, 10, 0, 80, 5, 0, 60, 55] + [0] * 6
b = [20100, 0, 160800, 1700, 2010, 0, 16080, 555, 0, 1660, 2255] + [0] * 6
w = v.dev_window(a, b, 2.0)
check("dev_iops = (reads + writes) / s", abs(w["dev_iops"] - 11000) < 1e-6)
check("dev_await_us = ms at the device / requests", abs(w["dev_await_us"] - 100.0) < 1e-6)
check("dev_aqu = ms at the device / window", abs(w["dev_aqu"] - 1.1) < 1e-9)
check("no samples, no figures", v.dev_window(None, b, 2.0)["dev_aqu"] is None)
check("no requests, no await", v.dev_window(a, a, 2.0)["dev_await_us"] is None)


check("slots: iodepth x numjobs",
      v.slots(["--ioengine", "io_uring", "--iodepth", "8", "--numjobs", "2"]) == 16)
check("slots: psync has one per thread",
      v.slots(["--ioengine", "psync", "--iodepth", "32", "--numjobs", "2"]) == 2)
# 2 slots at 20000 IOPS: 100 us per I/O, 80 of them at the device
check("off-device time = slots / IOPS - await", abs(v.off_device_us(2, 20000, 80) - 20) < 1e-9)
check("no await, no off-device time", v.off_device_us(2, 20000, None) is None)


def run(tool, iops, await_us):
    return {"tool": tool, "iops": iops, "gbps": iops * 4096 / 1e9, "p50_us": 80.0,
            "p99_us": 150.0, "cpu_s_per_gb": 1.0, "dev_bytes": 0, "dev_iops": iops,
            "dev_await_us": await_us, "dev_aqu": iops * await_us / 1e6,
            "dev_off_us": v.off_device_us(1, iops, await_us), "load": 0.5}


def summary(cell, l_iops, l_await):
    runs = []
    for _ in range(3):  # fio: 100 us per I/O, 80 at the device, 20 off it
        runs += [run("llmio", l_iops, l_await), run("fio", 10000, 80.0)]
    return v.summarize(cell, runs)


d = "rr4k_qd1 direct psync nj1"
check("same IOPS: agree", summary(d, 10000, 80.0)["verdict"] == "agree")
check("faster: llmio faster", summary(d, 11000, 80.0)["verdict"] == "llmio faster")
# 9000 IOPS = 111 us per I/O: with await 91 us llmio spent fio's 20 us off the device
s = summary(d, 9000, 91.1)
check("short IOPS, the device slower: at fio's await 1.00",
      abs(s["ratio_at_fio_await"][1] - 1) < 0.01 and s["verdict"] == "device slower, llmio not")
# the same IOPS with fio's await: llmio spent 31 us off the device, 0.90x at equal await
s = summary(d, 9000, 80.0)
check("short IOPS, llmio slower off the device",
      abs(s["ratio_at_fio_await"][1] - 0.90) < 0.01 and s["verdict"] == "llmio slower")
check("page cache: no device excuse",
      summary("rr4k_qd1 buffered psync nj1", 9000, 91.1)["verdict"] == "llmio slower")


def cpu_verdict(llmio, fio2):
    """--fio2: CPU s/GB of llmio and of fio's second run, fio's first at 1.0, 3 reps."""
    runs = []
    for l_cpu, f2_cpu in zip(llmio, fio2):
        runs += [dict(run("llmio", 10000, 80.0), cpu_s_per_gb=l_cpu),
                 run("fio", 10000, 80.0), dict(run("fio2", 10000, 80.0), cpu_s_per_gb=f2_cpu)]
    row = v.summarize("rr4k_qd1 direct psync nj1", runs)
    v.cpu_row(row, runs)
    return row


r = cpu_verdict([0.97, 1.0, 0.99], [1.02, 0.98, 1.0])
check("CPU s/GB at or below fio's: no worse",
      r["cpu_verdict"] == "no worse" and abs(r["ratio_cpu_s_per_gb"][1] - 0.99) < 1e-9)
r = cpu_verdict([1.03, 1.02, 1.04], [1.05, 0.97, 1.0])
check("above fio's, inside fio's own spread: within fio's spread",
      r["cpu_verdict"] == "within fio's spread" and abs(r["ratio_aa_cpu_s_per_gb"][2] - 1.05) < 1e-9)
r = cpu_verdict([1.03, 1.02, 1.04], [1.01, 0.99, 1.0])
check("above fio's and above fio's spread: worse", r["cpu_verdict"] == "worse")
sys.exit(1 if fails else 0)
EOF
if "$PY" "$T/unit.py" "$VS_FIO" >"$T/unit.log" 2>&1; then
	pass "vs_fio arithmetic and verdicts ($(grep -c '^ok:' "$T/unit.log") checks)"
else
	fail "vs_fio arithmetic and verdicts:"
	cat "$T/unit.log"
fi

if ! command -v fio >/dev/null 2>&1; then
	note "fio is not installed (scripts/bootstrap.sh installs it): the live cell is skipped"
	finish
fi
# the script's own test: the disk whose counters it would read, or none
if ! "$PY" -c "import importlib.machinery as m, importlib.util as u, sys
ld = m.SourceFileLoader('vs_fio', sys.argv[1])
v = u.module_from_spec(u.spec_from_loader('vs_fio', ld))
ld.exec_module(v)
sys.exit(v.block_dev_of(sys.argv[2]) is None)" "$VS_FIO" "$T"; then
	note "$T is not on a block device (tmpfs, overlay): the live cell is skipped"
	finish
fi

run "$VS_FIO" --llmio "$LLMIO" --dir "$T" --size 64m --reps 1 --runtime 1 --ramp 0.3 \
	--filter '^rr4k_qd1 direct psync nj1$' --out "$T/out"
if [ "$RC" = 0 ]; then
	pass "vs_fio runs one O_DIRECT cell"
else
	fail "vs_fio exit $RC: $(tail -c 600 "$T/stderr")"
fi
cat >"$T/live.py" <<'EOF'
import json
import sys

doc = json.load(open(sys.argv[1]))
runs = doc["cells"][0]["runs"]
bad = 0
for r in runs:
    if "error" in r:
        print("FAIL: %s: %s" % (r["tool"], r["error"]))
        bad += 1
        continue
    # totals over the whole run, not rates: they hold however slowly the tools ran
    want = r["ios"] * 4096
    ok = r["ios"] > 0 and r["dev_bytes"] >= want
    print("%s %s reports %d I/Os (%d bytes); the disk moved %d bytes over its run"
          % ("note:" if ok else "FAIL:", r["tool"], r["ios"], want, r["dev_bytes"]))
    bad += 0 if ok else 1
    if sys.argv[2] != "perf":
        continue
    dev, wait = r["dev_iops"] or 0, r["dev_await_us"] or 0
    # off the device: the gap between two I/Os of the one thread, a few to tens of us (the
    # two windows differ a little, so it may come out slightly negative)
    off = r["dev_off_us"] if r["dev_off_us"] is not None else -1e9
    ok = dev >= 0.8 * r["iops"] and wait > 0 and -0.25 * wait <= off < wait * 10
    print("%s %s reports %.0f IOPS; the disk completed %.0f requests/s, await %.0f us; "
          "off-device %.1f us per I/O" % ("note:" if ok else "FAIL:", r["tool"], r["iops"], dev,
                                          wait, off))
    bad += 0 if ok else 1
sys.exit(1 if bad or len(runs) != 2 else 0)
EOF
mode=correctness
perf_mode && mode=perf
if [ -f "$T/out/results.json" ] && "$PY" "$T/live.py" "$T/out/results.json" "$mode" >"$T/live.log" 2>&1; then
	if perf_mode; then
		pass "the disk's counters saw every request both tools report, at their rates"
	else
		pass "the disk's counters saw every byte both tools report"
	fi
else
	fail "device figures of the live cell:"
fi
cat "$T/live.log" 2>/dev/null
finish
