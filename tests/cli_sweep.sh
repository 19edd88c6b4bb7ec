#!/bin/bash
# shellcheck disable=SC2317 # helpers run via check
# cli_sweep.sh: `llmio sweep` and `llmio results export` end to end, on the null engine.
#
# The dry run counts points from the file's arithmetic; a job file error names the file, the
# line and the key and exits 2; a tiny sweep writes one fsynced record per point with unique
# hashes; a journal cut in the middle of a record (a sweep killed while writing) is resumed
# with no duplicate and no lost point; steady state ends a point well before its runtime and
# says so; the CSV export has one row per point with the configuration and metrics.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# hashes FILE: the config_hash of every complete, valid line, one per line
hashes() {
	python3 - "$1" <<'PYEOF'
import json, sys
for line in open(sys.argv[1]):
    if not line.endswith("\n"):
        continue
    try:
        print(json.loads(line)["config_hash"])
    except ValueError:
        pass
PYEOF
}

cat >"$T/tiny.ini" <<'EOF2'
; four points: 2 block sizes x 2 queue depths
[global]
ioengine=null
rw=randread
size=16m
runtime=200ms

[tiny]
bs=4k,16k
iodepth=1..2:x2
EOF2

echo "== help"
expect_rc 0 "sweep --help" sweep --help
expect_out "sweep --help names the language and the journal" "exclude=" "--resume" "ss=iops"
expect_rc 0 "results --help" results --help

echo "== dry run"
expect_rc 0 "dry run" sweep "$T/tiny.ini" --dry-run
check "dry run: '4 points' line" grep -qx '4 points' "$T/stdout"
expect_out "dry run: sample and estimate" "sample:" "[tiny] bs=16k iodepth=2" "estimated time"
expect_rc 0 "dry run --repeat 3" sweep "$T/tiny.ini" --dry-run --repeat 3
check "dry run --repeat 3: '12 points'" grep -qx '12 points' "$T/stdout"

echo "== the shipped examples parse, with counts from their arithmetic"
EX=$(dirname "$0")/../examples/sweeps
expect_rc 0 "small.ini" sweep "$EX/small.ini" --dry-run
# 3 engines x 2 bs x 2 QD, minus psync at QD 16 (2)
check "small.ini: 10 points" grep -qx '10 points' "$T/stdout"
expect_rc 0 "study_cpu_matrix.ini" sweep "$EX/study_cpu_matrix.ini" --dry-run
# 5 datapaths x (randread x 5 bs + randwrite, randrw x 2 bs) x 5 (QD, threads) pairs
check "study_cpu_matrix.ini: 225 points" grep -qx '225 points' "$T/stdout"
expect_out "study: a time range with steady state" "estimated time:" " to "
expect_rc 0 "phases.ini (workload points) dry run" sweep "$EX/phases.ini" \
	--dry-run
# load x 2 strategies x 3 engines + ckpt x 3 engines x 2 ranks
check "phases.ini: 12 points" grep -qx "12 points" "$T/stdout"

echo "== job file errors: exit 2, file:line: key"
printf '[global]\nioengine=null\n[s]\nbs=4k\nqueue_depth=8\n' >"$T/bad.ini"
expect_rc 2 "unknown key" sweep "$T/bad.ini" --dry-run
expect_err "unknown key names file, line and key" "bad.ini:5: queue_depth: unknown key"
printf '[s]\niodepth=1..8:x1\n' >"$T/bad.ini"
expect_rc 2 "range that never ends" sweep "$T/bad.ini" --dry-run
expect_err "never-ending range named" "bad.ini:2: iodepth:" "never ends"
expect_rc 2 "no -o" sweep "$T/tiny.ini"
expect_rc 2 "missing job file is usage" sweep "$T/none.ini" --dry-run

echo "== a tiny sweep"
J=$T/j.jsonl
expect_rc 0 "sweep" sweep "$T/tiny.ini" -o "$J" --keep-cache
check "4 records" test "$(hashes "$J" | wc -l)" -eq 4
check "4 distinct hashes" test "$(hashes "$J" | sort -u | wc -l)" -eq 4
json_check <(head -n 1 "$J") "record: contract keys, one phase 'run' with one job" \
	'all(k in d for k in ("llmio","record","config_hash","sweep","config","workload","host","cache_dropped","steady_state","start_epoch_ms","wall_s","phases")) and d["workload"] == "job" and [p["name"] for p in d["phases"]] == ["run"] and len(d["phases"][0]["jobs"]) == 1 and "error" not in d'
json_check <(head -n 1 "$J") "record: canonical config, job object as llmio run --json" \
	'd["config"]["bs"] == 4096 and d["config"]["runtime"] == 200000000 and d["config"]["repeat"] == 0 and d["phases"][0]["jobs"][0]["read"]["iops"] > 0 and "clat_ns" in d["phases"][0]["jobs"][0]["read"] and d["sweep"]["points"] == 4'
# the journal keeps config_hash and resumed sweeps and reports compare against it: it stays the
# documented FNV-1a (docs/sweeps.md), computed here by Python from each record's config
fnv_ok() {
	python3 - "$1" <<'PYEOF'
import json, sys
def fnv(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h
n = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    canon = "".join("%s=%s\n" % (k, v) for k, v in sorted(d["config"].items()))
    if d["config_hash"] != fnv(canon):
        sys.exit("%s: config_hash %s, FNV-1a of its config %s" % (sys.argv[1], d["config_hash"], fnv(canon)))
    n += 1
sys.exit(0 if n else "no records")
PYEOF
}
check "config_hash is FNV-1a 64 of the record's config (key=value lines in key order)" fnv_ok "$J"
expect_rc 2 "an existing journal needs --resume" sweep "$T/tiny.ini" -o "$J"
expect_err "the message says --resume" "--resume"

echo "== resume after a crash in the middle of a record"
C=$T/crash.jsonl
head -n 2 "$J" >"$C"
sed -n 3p "$J" | head -c 100 >>"$C" # the third record, torn
expect_rc 0 "resume" sweep "$T/tiny.ini" -o "$C" --resume --keep-cache
expect_err "torn line reported" "line 3 is incomplete"
expect_out "two points skipped" "2 already in the journal"
check "no duplicate: 4 valid records" test "$(hashes "$C" | wc -l)" -eq 4
check "no lost point: the same 4 hashes as the full run" \
	test "$(hashes "$C" | sort | tr '\n' ' ')" = "$(hashes "$J" | sort | tr '\n' ' ')"
check "nothing destroyed: the torn bytes are still there" grep -q '^{"llmio"' "$C"
expect_rc 0 "resume again: nothing to run" sweep "$T/tiny.ini" -o "$C" --resume
expect_out "all 4 skipped" "0 points run" "4 already in the journal"
expect_rc 0 "--repeat 2 runs only the new repeats" sweep "$T/tiny.ini" -o "$C" --resume \
	--repeat 2 --shuffle --seed 7 --keep-cache
check "8 distinct records" test "$(hashes "$C" | sort -u | wc -l)" -eq 8

echo "== steady state ends a point early"
cat >"$T/ss.ini" <<'EOF2'
[ss]
ioengine=null
rw=read
size=16m
runtime=20s
ss=iops:50%
ss_window=2s
EOF2
S=$T/ss.jsonl
start=$(date +%s)
expect_rc 0 "steady-state sweep" sweep "$T/ss.ini" -o "$S" --keep-cache
took=$(($(date +%s) - start))
check "it ended well before the 20 s runtime (took ${took}s)" test "$took" -lt 10
json_check "$S" "steady_state.reached, not interrupted, measured < max" \
	'd["steady_state"]["enabled"] and d["steady_state"]["reached"] and d["steady_state"]["max_s"] == 20 and 2 <= d["steady_state"]["measured_s"] < 10 and d["phases"][0]["jobs"][0]["interrupted"] is False and d["config"]["ss"] == "iops:50"'

echo "== SIGTERM stops the sweep; the cut point is not recorded"
printf '[s]\nioengine=null\nruntime=5s\nbs=4k,8k\n' >"$T/long.ini"
"$LLMIO" sweep "$T/long.ini" -o "$T/int.jsonl" --keep-cache >"$T/stdout" 2>"$T/stderr" &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid"
RC=$?
check "exit 1 (interrupted)" test "$RC" -eq 1
expect_err "says how to continue" "interrupted after 0 of 2 points" "--resume"
check "the journal holds no cut-short record" test ! -s "$T/int.jsonl"

echo "== per-point setup: no cache drop for null points, libaio probed once"
# A null-engine point touches no file, so no point of an all-null sweep is preceded by the
# system-wide page cache drop (the first one was, which cost a null-engine sweep a second).
expect_rc 0 "null-engine sweep on the default path" sweep "$T/tiny.ini" -o "$T/nodrop.jsonl"
if [ "$(id -u)" = 0 ]; then
	check "no null-engine point has the cache dropped, the first neither" python3 -c \
		'import json, sys; r = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(r) == 4 and not any(x["cache_dropped"] for x in r) else 1)' "$T/nodrop.jsonl"
else
	note "not root: no page cache drops to count"
fi
# libaio's probe (io_setup + io_destroy, whose RCU wait cost each point 36 ms) runs once per
# process, and a worker hands its idle context to another thread to destroy: counted in the
# system calls of a sweep of three libaio points at QD 2 (the probe's context has 1 slot).
printf '[global]\nioengine=libaio\nrw=randread\nsize=1m\nruntime=100ms\nfilename=aio.dat\n' \
	>"$T/aio.ini"
printf 'iodepth=2\n[a]\nbs=4k,8k,16k\n' >>"$T/aio.ini"
mkdir -p "$T/aio"
if ! command -v strace >/dev/null; then
	note "no strace: the libaio probe count is not checked"
elif ! "$LLMIO" run --ioengine libaio --filename "$T/aio/probe" --size 64k --rw read \
	--bs 4k >/dev/null 2>&1; then
	note "libaio cannot run here: the probe count is not checked"
elif ! strace -f -qq -e trace=io_setup,io_destroy -o "$T/aio.st" "$LLMIO" sweep "$T/aio.ini" \
	-o "$T/aio.jsonl" --dir "$T/aio" -q --keep-cache >"$T/aio.out" 2>&1; then
	note "strace cannot trace here ($(head -c 200 "$T/aio.out")): the probe count is not checked"
else
	check "3 libaio points: one probe context ($(grep -c 'io_setup(1,' "$T/aio.st"))" \
		test "$(grep -c 'io_setup(1,' "$T/aio.st")" -eq 1
	check "and one context per point ($(grep -c 'io_setup(2,' "$T/aio.st"))" \
		test "$(grep -c 'io_setup(2,' "$T/aio.st")" -eq 3
	# the threads that set up the points' contexts never destroy one themselves
	check "no worker waits for its own context's destruction" python3 - "$T/aio.st" <<'PYEOF'
import re, sys
setup, destroy = set(), set()
for line in open(sys.argv[1]):
    m = re.match(r"(\d+)\s+io_(setup\(2,|destroy\()", line)
    if m:
        (setup if m.group(2).startswith("setup") else destroy).add(m.group(1))
sys.exit(0 if setup and not setup & destroy else 1)
PYEOF
fi

echo "== a paced point measures its rate, ramp or not"
# The rate limiter's clock restarts with the measured window, like its byte count: before, a
# point with ramp_time began its window with a burst of ramp_time x rate (1 s of ramp at 1,000
# IOPS then 1 s measured: 2,000 IOPS), which no steady-state test could call steady.  Load only
# lowers a paced rate, so the bound cannot fail on a busy machine.
printf '[global]\nioengine=null\nrw=randread\nbs=4k\nrate_iops=1000\nruntime=1s\n' >"$T/paced.ini"
printf 'time_based=1\n[p]\nramp_time=1s\n' >>"$T/paced.ini"
expect_rc 0 "paced sweep point with a 1 s ramp" sweep "$T/paced.ini" -o "$T/paced.jsonl"
json_check "$T/paced.jsonl" "its IOPS are within 25 % above rate_iops=1000, not twice it" \
	'0 < d["phases"][0]["jobs"][0]["read"]["iops"] <= 1250'

echo "== results export"
X=$T/out.csv
expect_rc 0 "export" results export "$J" --csv -o "$X"
check "CSV: header + 4 rows" test "$(wc -l <"$X")" -eq 5
check "CSV: identity, config and metric columns" \
	grep -q '^config_hash,section,point,repeat,.*,bs,.*,iodepth,.*,read_iops,' "$X"
check "CSV: rows as wide as the header" \
	test "$(awk -F, '{print NF}' "$X" | sort -u | wc -l)" -eq 1
expect_rc 0 "export of the crashed journal skips the torn line" results export "$C" --csv
expect_err "torn line reported by export" "line 3 is not valid JSON"
expect_rc 2 "export needs a format" results export "$J"
finish
