#!/bin/bash
# cli_io_stages.sh: bench/io_stages cuts each I/O into stages from the kernel's trace events.
#
# 1. The parser on a made-up trace with known times: three I/O cycles of one thread, plus a
#    read-ahead issued by another thread of the same program (fio's main thread does this)
#    and an interrupt on another CPU, which must both be ignored.  Every stage must come out
#    at the microseconds written into the trace.
# 2. As root with tracefs and fio, on a block device: one interleaved pair on a small file.
#    Both tools' I/Os must be found.  As a performance test (perf_io_stages, make
#    check-perf): also at least 100 of each in the 0.4 s, and the ftrace device time must
#    agree with the disk's own await over the same run within a factor of two (they time the
#    same requests from slightly different points; a busy CPU delays the trace's timestamps).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

STAGES_PY=$(cd "$(dirname "$0")/.." && pwd)/bench/io_stages
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "no /usr/bin/python3 (bench/io_stages's interpreter)"

cat >"$T/trace.txt" <<'EOF'
# tracer: nop
             fio-900     [000] ..... 100.000000: block_rq_issue: 254,0 RA 4096 () 64 + 8 be,0,4 [fio]
             fio-901     [001] ..... 100.000100: block_rq_issue: 254,0 RS 4096 () 1000 + 8 be,0,4 [fio]
             fio-901     [001] d..2. 100.000120: sched_switch: prev_comm=fio prev_pid=901 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0       [000] d.h1. 100.000130: irq_handler_entry: irq=40 name=eth0
          <idle>-0       [001] d.h1. 100.000160: irq_handler_entry: irq=36 name=virtio1-req.0
          <idle>-0       [001] ..s1. 100.000161: block_rq_complete: 254,0 RS () 1000 + 8 be,0,4 [0]
          <idle>-0       [001] dNs4. 100.000162: sched_wakeup: comm=fio pid=901 prio=120 target_cpu=001
             fio-901     [001] ..... 100.000175: block_rq_issue: 254,0 RS 4096 () 2000 + 8 be,0,4 [fio]
             fio-901     [001] d..2. 100.000195: sched_switch: prev_comm=fio prev_pid=901 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0       [001] d.h1. 100.000235: irq_handler_entry: irq=36 name=virtio1-req.0
          <idle>-0       [001] ..s1. 100.000236: block_rq_complete: 254,0 RS () 2000 + 8 be,0,4 [0]
          <idle>-0       [001] dNs4. 100.000237: sched_wakeup: comm=fio pid=901 prio=120 target_cpu=001
             fio-901     [001] ..... 100.000250: block_rq_issue: 254,0 RS 4096 () 3000 + 8 be,0,4 [fio]
             fio-901     [001] d..2. 100.000270: sched_switch: prev_comm=fio prev_pid=901 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0       [000] d.h1. 100.000310: irq_handler_entry: irq=36 name=virtio1-req.0
          <idle>-0       [000] ..s1. 100.000311: block_rq_complete: 254,0 RS () 3000 + 8 be,0,4 [0]
          <idle>-0       [000] dNs4. 100.000312: sched_wakeup: comm=fio pid=901 prio=120 target_cpu=001
             fio-901     [001] ..... 100.000330: block_rq_issue: 254,0 RS 4096 () 4000 + 8 be,0,4 [fio]
EOF

cat >"$T/unit.py" <<'EOF'
import importlib.machinery
import importlib.util
import sys

loader = importlib.machinery.SourceFileLoader("io_stages", sys.argv[1])
spec = importlib.util.spec_from_loader("io_stages", loader)
m = importlib.util.module_from_spec(spec)
loader.exec_module(m)
with open(sys.argv[2]) as f:
    st = m.parse(f.read().splitlines(), "fio")
# three complete cycles; the third completes on CPU 0, away from the issuing CPU 1
want = {"issue->sleep": [20, 20, 20], "sleep->irq": [40, 40, 40],
        "irq->complete": [1, 1, 1], "complete->wakeup": [1, 1, 1],
        "wakeup->issue": [13, 13, 18], "device": [61, 61, 61], "off-device": [14, 14, 19],
        m.SAME_CPU: [1, 1, 0]}
fails = 0
for k, v in want.items():
    got = [round(x) for x in st[k]]
    ok = got == v
    fails += not ok
    print(("ok:   " if ok else "FAIL: ") + "%s %s (want %s)" % (k, got, v))
sys.exit(1 if fails else 0)
EOF
if "$PY" "$T/unit.py" "$STAGES_PY" "$T/trace.txt" >"$T/unit.log" 2>&1; then
	pass "io_stages parser: every stage of a known trace ($(grep -c '^ok:' "$T/unit.log") checks)"
else
	fail "io_stages parser:"
	sed 's/^/    /' "$T/unit.log"
fi

# the live pair; without it the perf run has nothing to judge, so it says so as a skip
no_live_pair() {
	perf_mode && skip_all "$1: the live pair, all this performance test judges, cannot run"
	note "$1: the live pair is skipped"
	finish
}
if [ "$(id -u)" -ne 0 ] || [ ! -d /sys/kernel/tracing/events/block ]; then
	no_live_pair "not root or no tracefs at /sys/kernel/tracing"
fi
command -v fio >/dev/null 2>&1 || no_live_pair "fio is not installed (scripts/bootstrap.sh installs it)"
DEV=$(findmnt -n -o SOURCE --target "$T" 2>/dev/null)
case $DEV in
/dev/*) ;;
*) no_live_pair "$T is not on a block device ($DEV)" ;;
esac
DISK=$(basename "$(readlink -f "/sys/class/block/${DEV#/dev/}")")
[ -e "/sys/class/block/$DISK/partition" ] && DISK=$(basename "$(dirname "$(readlink -f "/sys/class/block/$DISK")")")
stat_of() { awk '{print $1 + $5, $4 + $8}' "/sys/block/$DISK/stat"; } # requests, ms at the device
# lay the file out first, so that the disk's figures below hold only the pair's reads
"$LLMIO" run --ioengine psync --filename "$T/stages.dat" --size 32m --rw read --io_size 1m \
	--quiet >/dev/null 2>&1
read -r req0 ms0 < <(stat_of)
run "$PY" "$STAGES_PY" --pairs 1 --llmio "$LLMIO" -- --ioengine psync --rw randread --bs 4k \
	--iodepth 1 --direct 1 --invalidate 0 --runtime 0.4s --time_based --filename "$T/stages.dat" --size 32m
read -r req1 ms1 < <(stat_of)
if [ "$RC" -ne 0 ]; then
	fail "io_stages exit $RC: $(tail -c 600 "$T/stderr")"
	finish
fi
pass "io_stages runs one pair"
sed 's/^/    /' "$T/stdout"
await=$(awk -v r=$((req1 - req0)) -v ms=$((ms1 - ms0)) 'BEGIN {if (r) printf "%.1f", ms * 1000 / r}')
ours=0
for tool in llmio fio; do
	row=$(grep -E "^$tool +1 " "$T/stdout")
	n=$(awk '{print $3}' <<<"$row")
	if perf_mode; then
		check "$tool: at least 100 I/Os cut into stages ($n)" test "${n:-0}" -ge 100
	else
		check "$tool: its I/Os cut into stages ($n)" test "${n:-0}" -ge 1
	fi
	ours=$((ours + ${n:-0}))
done
if ! perf_mode; then
	note "the ftrace device time against the disk's await: a performance check (make check-perf)"
	finish
fi
# the disk's counters are the whole disk's: other work on it (more requests than the two
# tools issued, with the warm-up run) would make its await no one's in particular
if [ $((req1 - req0)) -gt $((ours * 2)) ]; then
	note "the disk served $((req1 - req0)) requests during the pair, the tools $ours: other work on the disk; the await comparison is skipped"
	finish
fi
for tool in llmio fio; do
	dev=$(grep -E "^$tool +1 " "$T/stdout" | awk '{print $(NF-3)}')
	check "$tool: ftrace device time $dev us within 2x of the disk's await $await us" \
		awk -v a="$await" -v d="$dev" 'BEGIN {exit !(a > 0 && d > a / 2 && d < a * 2)}'
done
finish
