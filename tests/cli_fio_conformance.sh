#!/bin/bash
# cli_fio_conformance.sh: the same job files and command lines through fio and through
# `llmio run`, side by side, each in an empty directory of its own, and what must agree without
# timing compared (docs/fio.md): the exit status; the jobs, their names and groups; the bytes
# and I/Os of each direction; the files created and their sizes; the keys of fio's JSON and
# their types (tests/fio_json_keys.py); the verify outcome.  The job files, one behaviour each,
# are in tests/data/fio_conformance/.  No timing is compared.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

command -v fio >/dev/null || skip_all "fio is not installed (the reference: scripts/bootstrap.sh)"
CASES=$(cd "$(dirname "$0")/data/fio_conformance" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
KEYS=$HERE/fio_json_keys.py

# in_dir TOOL NAME ARGS...: `fio ARGS` or `llmio run ARGS` in the empty directory $T/TOOL/NAME
# (with an empty sub/ for directory=), fio's JSON into out.json there; its exit status in RC.
in_dir() {
	local tool=$1 name=$2
	shift 2
	mkdir -p "$T/$tool/$name/sub"
	cd "$T/$tool/$name" || return
	if [ "$tool" = fio ]; then
		run fio "$@"
	else
		run "$LLMIO" run "$@"
	fi
	cd "$T" || return
}

# side_by_side NAME ARGS...: both tools, then everything that must agree.  With DIFFERS=verify
# (docs/fio.md, "verify"), a write job's read-back is left out: fio counts it in the job's
# reads and saves its verify state to a file, llmio keeps it out of the measured window.  With
# DIFFERS=verify_state only that file is (a job file that verifies without read-back).
side_by_side() {
	local name=$1 frc out
	shift
	in_dir fio "$name" "$@" --output-format=json --output=out.json
	frc=$RC
	in_dir llmio "$name" "$@" --output-format=json --output=out.json
	check "$name: the exit status (fio $frc, llmio $RC)" test "$frc" = "$RC"
	if out=$(python3 - "$T/fio/$name" "$T/llmio/$name" "${DIFFERS:-}" 2>&1 <<'PY'
import json, os, sys

VERIFY = sys.argv[3] == "verify"
# a job file whose jobs read back what an earlier one wrote: fio saves its verify state too
STATE = VERIFY or sys.argv[3] == "verify_state"

def load(d):
    with open(os.path.join(d, "out.json")) as f:
        return json.load(f)

def jobs(doc):
    # what each job did, without timing: name, group, and per direction bytes and I/Os
    return [(j["jobname"], j["groupid"]) +
            (() if VERIFY else (j["read"]["io_bytes"], j["read"]["total_ios"])) +
            (j["write"]["io_bytes"], j["write"]["total_ios"]) +
            (j["trim"]["io_bytes"], j["trim"]["total_ios"]) for j in doc["jobs"]]

def files(d):
    # a log's bytes hold times and latencies: its lines (one per I/O) are compared instead
    found = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            if os.path.relpath(p, d) != "out.json" and not (STATE and
                                                            n.endswith("-verify.state")):
                found[os.path.relpath(p, d)] = (("lines", sum(1 for _ in open(p)))
                                                if n.endswith(".log") else os.path.getsize(p))
    return found

f, l = sys.argv[1:3]
bad = []
if jobs(load(f)) != jobs(load(l)):
    bad.append("jobs (name, group, read, write, trim bytes and I/Os): fio %s, llmio %s"
               % (jobs(load(f)), jobs(load(l))))
if files(f) != files(l):
    bad.append("files (path: bytes): fio %s, llmio %s" % (files(f), files(l)))
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
	); then
		pass "$name: the same jobs, bytes, I/Os and files"
	else
		fail "$name: $out"
	fi
	if out=$(python3 "$KEYS" "$T/fio/$name/out.json" "$T/llmio/$name/out.json" 2>&1); then
		pass "$name: fio's JSON keys, with fio's types"
	else
		fail "$name: JSON keys: $out"
	fi
}

echo "== job files"
for f in "$CASES"/*.fio; do
	DIFFERS=$(grep -q '^verify=' "$f" && echo verify_state) side_by_side "$(basename "$f" .fio)" "$f"
done

# jobs_json NAME EXPR: EXPR (Python, over jobs: {jobname: fio's JSON job}) holds for both tools
jobs_json() {
	local name=$1 desc=$2 expr=$3 tool
	for tool in fio llmio; do
		check "$name: $tool: $desc" python3 -c 'import json, sys
# fio may write a line of its own before the document (seen once, under load, with exitall)
t = open(sys.argv[1]).read()
t = t if t.startswith("{") else t[t.index("\n{") + 1:]
jobs = {j["jobname"]: j for j in json.loads(t)["jobs"]}
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$T/$tool/$name/out.json" "$expr"
	done
}

echo "== run control: exitall, exit_what, flow, timeout, steadystate, latency_target (wait_for.fio is above)"
# a stopped job's runtime is 60 s without exitall; what time-based jobs moved is timing, not
# compared
# run_each SUBDIR [PREFIX]: each job file of $CASES/SUBDIR through both tools, in
# $T/TOOL/PREFIXNAME; each must exit 0
run_each() {
	local f name tool
	for f in "$CASES/$1"/*.fio; do
		name=${2:-}$(basename "$f" .fio)
		for tool in fio llmio; do
			in_dir "$tool" "$name" "$f" --output-format=json --output=out.json
			check "$name: $tool ran (exit $RC)" test "$RC" -eq 0
		done
	done
}
run_each run_control
jobs_json exitall_group "[long] stopped when [quick], of its group, ended" \
	'jobs["long"]["job_runtime"] < 30000 and jobs["quick"]["write"]["io_bytes"] == 65536'
jobs_json exitall_group "[other], of another group, ran its runtime" \
	'jobs["other"]["job_runtime"] >= 1900'
jobs_json exitall_stonewall "[long], of another group, stopped; [next] ran after" \
	'jobs["long"]["job_runtime"] < 30000 and jobs["next"]["write"]["io_bytes"] == 65536'
# flow: the shared counter keeps the I/O counts at the weights' ratio (4:1; unthrottled the
# cached reads outrun the writes several times), counted from the per-I/O logs in the middle
# half of the time both jobs ran (one that ends first leaves the other alone)
for tool in fio llmio; do
	check "flow: $tool: the writer did 4 I/Os for each of the reader's" python3 -c 'import sys
t = [[int(l.split(",")[0]) for l in open(sys.argv[1] + "/f_iops.%d.log" % n)] for n in (1, 2)]
end = min(max(x) for x in t)
w, r = (sum(1 for v in x if end / 4 <= v < end * 3 / 4) for x in t)
sys.exit(0 if r and abs(w / r - 4) < 0.2 else 1)' "$T/$tool/flow"
done
jobs_json timeout "timeout=1, fio's runtime, ran the time-based job a second" \
	'900 <= jobs["t"]["job_runtime"] < 10000'
jobs_json steadystate "steady state attained: the job ended before its runtime" \
	'jobs["ss"]["steadystate"]["attained"] == 1 and jobs["ss"]["job_runtime"] < 30000 and
	 len(jobs["ss"]["steadystate"]["data"]["iops"]) == 2'
# fio's criterion (the largest deviation from the window's mean, in % of it) recomputed from
# each tool's own window: fio's definition, and llmio's figures as fio's formula has them
jobs_json steadystate "the criterion is fio's, from the window's samples" \
	'(lambda s, y: abs(float(s["criterion"].rstrip("%")) -
	                   100 * max(abs(v - sum(y) / len(y)) for v in y) / (sum(y) / len(y)))
	  < 1e-3)(jobs["ss"]["steadystate"], jobs["ss"]["steadystate"]["data"]["iops"])'
if out=$(python3 "$KEYS" --strict "$T/fio/steadystate/out.json" \
	"$T/llmio/steadystate/out.json" 2>&1); then
	pass "steadystate: fio's JSON keys (its steadystate object too), with fio's exact types"
else
	fail "steadystate: JSON keys: $out"
fi
# latency_target: what the search decides, in fio's keys and units (target ns, window us)
jobs_json latency_met "a met target: the job's iodepth found, the job ended early" \
	'jobs["lt"]["latency_depth"] == 4 and jobs["lt"]["latency_target"] == 10**12 and
	 jobs["lt"]["latency_window"] == 200000 and jobs["lt"]["latency_percentile"] == 100 and
	 jobs["lt"]["job_runtime"] < 30000'
jobs_json latency_impossible "an impossible target: depth 1, no error" \
	'jobs["lt"]["latency_depth"] == 1 and jobs["lt"]["latency_target"] == 1000 and
	 jobs["lt"]["latency_percentile"] == 50 and jobs["lt"]["error"] == 0'
# [never], which exit_what=all kept from starting, is reported with no I/O, its file laid out
jobs_json exitall_all "[long] stopped, [never] never ran and is reported" \
	'jobs["long"]["job_runtime"] < 30000 and list(jobs) == ["quick", "long", "never"] and
	 jobs["never"]["write"]["total_ios"] == 0 and jobs["never"]["groupid"] == 1'
for tool in fio llmio; do
	check "exitall_all: $tool laid out [never]'s file" test -s "$T/$tool/exitall_all/never.0.0"
done

echo "== rate and rate_iops per direction (READ,WRITE): each direction at its own rate"
# A rate caps a direction's I/Os from above at every moment: by t ms after the job's start at
# most rate x t / bs + 1 of them (the first is due at once), which holds however busy the
# machine (a slow one only does fewer).  Checked in both tools' JSON (bytes per direction over
# job_runtime) and per-I/O logs (a completion is logged after its issue, so the count logged
# by t is under the cap too).  A direction paced at the other's rate, or not at all, breaks
# the lower of the two caps: unthrottled, these cached I/Os run thousands of times faster.
run_each rate rate_
for f in "$CASES"/rate/*.fio; do
	name=$(basename "$f" .fio)
	for tool in fio llmio; do
		check "rate $name: $tool: each direction within its rate, in the JSON and the log" \
			python3 - "$T/$tool/rate_$name" "$f" <<'PY'
import json, re, sys

d, jobfile = sys.argv[1:3]
text = open(jobfile).read()
bs = 4096
m = re.search(r"^rate=(.*)$", text, re.M)
if m:
    caps = [float(v[:-1]) * (1 << 10 if v[-1] == "k" else 1 << 20) if v else 0
            for v in m.group(1).split(",")]
else:
    caps = [float(v) * bs for v in re.search(r"^rate_iops=(.*)$", text, re.M).group(1).split(",")]
job = json.load(open(d + "/out.json"))["jobs"][0]
bad = []
for k, ddir in enumerate(("read", "write")):
    done = job[ddir]["io_bytes"]
    if not caps[k]:
        continue
    cap = caps[k] * (job["job_runtime"] + 1) / 1000 + bs
    if done > cap:
        bad.append("%s: %d bytes in %d ms, above its rate's %d" % (ddir, done, job["job_runtime"], cap))
    if not done:
        bad.append("%s: no I/O" % ddir)
n = [0, 0]
for line in open(d + "/r_iops.1.log"):
    f = [x.strip() for x in line.split(",")]
    t, k = int(f[0]), int(f[2])
    n[k] += 1
    if caps[k] and n[k] > caps[k] * (t + 1) / 1000 / bs + 1:
        bad.append("log: %d %s I/Os by %d ms, above the rate" % (n[k], ("read", "write")[k], t))
        break
if not caps[0] and not job["read"]["total_ios"] > job["write"]["total_ios"]:
    bad.append("reads, not limited, did no more than the limited writes")
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
	done
done
# rate with numjobs is each clone's: together they move numjobs x rate, under that cap and
# above 0.55 of it (a rate split over the clones would stay under half of it)
run_each rate_clones
for tool in fio llmio; do
	check "rate with numjobs=2: $tool paces each clone at the rate" python3 -c 'import json, sys
got = json.load(open(sys.argv[1]))["jobs"][0]["read"]["io_bytes"]
want = 2 * 256 * 1024 * 2
print(got, want)
sys.exit(0 if 0.55 * want < got <= 2 * 256 * 1024 * 2.5 + 2 * 4096 else 1)' "$T/$tool/clones/out.json"
done
in_dir llmio rate_four --name=c --rw=randrw --size=64k --rate=1m,2m,3m,4m
check "rate with a fourth value: refused (exit $RC)" test "$RC" -eq 2
check "rate with a fourth value: names what rate takes" \
	grep -q "rate=1m,2m,3m,4m is not valid: expected a size per second, or READ,WRITE" "$T/stderr"

echo "== fallocate and trims: the blocks allocated (st_blocks), beside the sizes compared above"
for m in none:fa keep:fa truncate:fa native:fa read:fr; do
	fb=$(stat -c %b "$T/fio/fallocate_${m%:*}/${m#*:}.0.0" 2>/dev/null)
	lb=$(stat -c %b "$T/llmio/fallocate_${m%:*}/${m#*:}.0.0" 2>/dev/null)
	m=${m%:*}
	check "fallocate_$m: the same blocks allocated (fio ${fb:-none}, llmio ${lb:-none})" \
		test -n "$fb" -a "$fb" = "$lb"
done
fb=$(stat -c %b "$T/fio/trim_falloc/pt.0.0" 2>/dev/null)
lb=$(stat -c %b "$T/llmio/trim_falloc/pt.0.0" 2>/dev/null)
check "trim_falloc: every block punched out (fio ${fb:-none}, llmio ${lb:-none})" \
	test "$fb" = 0 -a "$lb" = 0
# fio sends other engines' trims to the device (BLKDISCARD), which a file fails: refused here
in_dir llmio trim_psync --name=t --rw=randtrim --size=64k
check "rw=randtrim with psync: refused (exit $RC)" test "$RC" -eq 2
check "rw=randtrim with psync: names falloc instead" grep -q "llmio trims with ioengine=falloc" \
	"$T/stderr"

echo "== command lines"
side_by_side cl_two_names --name=a --rw=write --size=64k --name=b --rw=randwrite --size=32k \
	--bs=8k
side_by_side cl_global_first --size=64k --bs=8k --name=x --rw=write --name=y --rw=write \
	--bs=4k --stonewall
side_by_side cl_runtime_bytes --name=rt --rw=read --size=64k --runtime=60
side_by_side cl_directory_list --name=d --rw=write --size=64k --directory=sub --filename=f:g
DIFFERS=verify side_by_side cl_verify_write --name=v --rw=write --size=64k --bs=16k --verify=crc32c
DIFFERS=verify side_by_side cl_verify_crc64 --name=v --rw=randwrite --size=64k --bs=4k \
	--ioengine=libaio --iodepth=8 --verify=crc64
DIFFERS=verify side_by_side cl_verify_meta --name=v --rw=write --size=64k --bs=16k --verify=meta

echo "== bssplit: one size per direction moves the same bytes in the same I/Os"
side_by_side cl_bssplit_dirs --name=bd --rw=write --size=256k --bssplit=4k/100,16k/100
side_by_side cl_bssplit_read --name=br --rw=read --size=256k --bssplit=8k,4k

# logged NAME LOG ARGS...: both tools run the job with a per-I/O IOPS log LOG_iops.N.log that has
# each I/O's offset (log_offset), fio's JSON in out.json; each must exit 0
logged() {
	local name=$1 log=$2 tool
	shift 2
	for tool in fio llmio; do
		in_dir "$tool" "$name" "$@" --write_iops_log="$log" --log_offset=1 \
			--output-format=json --output=out.json
		check "$name: $tool ran (exit $RC)" test "$RC" -eq 0
	done
}

# split_sizes NAME JOB ARGS...: both tools run the job with a per-I/O IOPS log (its 4th column
# is each I/O's size, its 5th the offset); every direction's sizes are the split's (bssplit's,
# or bsrange's: each multiple of MIN up to MAX alike), each with its weight's share of the
# direction's I/Os (within 4.5 standard deviations of a binomial draw, a bound neither tool's
# fixed seed crosses by chance), a random I/O starts at a multiple of blockalign (default: the
# direction's smallest size), and a sequential job moves exactly its size in both.
split_sizes() {
	local name=$1 out
	shift
	logged "$name" s "$@"
	if out=$(PYTHONPATH=$HERE python3 - "$T/fio/$name" "$T/llmio/$name" "$@" 2>&1 <<'PY'
import glob, json, math, os, sys

from fio_job_args import job_args, size
args = job_args(sys.argv[3:])
lists = args.get("bssplit", args.get("bsrange", "")).split(",")
want = {}
for d, text in enumerate(lists[:2] if len(lists) > 1 else lists * 2):
    if "bssplit" in args:
        want[d] = {size(e.split("/")[0]): int(e.split("/")[1]) / 100 for e in text.split(":")}
    else:
        lo, hi = (size(x) for x in text.split("-"))
        want[d] = {k: lo / hi for k in range(lo, hi + 1, lo)}
align = {d: size(args.get("blockalign", "0")) or min(want[d]) for d in want}
bad = []
for tool, d in (("fio", sys.argv[1]), ("llmio", sys.argv[2])):
    seen = {0: {}, 1: {}}
    for log in glob.glob(os.path.join(d, "s_iops.*.log")):
        for line in open(log):
            f = [x.strip() for x in line.split(",")]
            seen[int(f[2])][int(f[3])] = seen[int(f[2])].get(int(f[3]), 0) + 1
            if args["rw"].startswith("rand") and int(f[4]) % align[int(f[2])]:
                bad.append("%s: an I/O at %s, not a multiple of %d" % (tool, f[4], align[int(f[2])]))
                break
    doc = json.load(open(os.path.join(d, "out.json")))["jobs"][0]
    for dd, key in ((0, "read"), (1, "write")):
        n = sum(seen[dd].values())
        if n != doc[key]["total_ios"]:
            bad.append("%s %s: the log has %d I/Os, the JSON %d" % (tool, key, n, doc[key]["total_ios"]))
        if not n:
            continue
        if set(seen[dd]) - set(want[dd]):
            bad.append("%s %s: sizes %s, not the split's %s" % (tool, key, sorted(seen[dd]), sorted(want[dd])))
        for bs, p in want[dd].items():
            share, sd = seen[dd].get(bs, 0) / n, math.sqrt(p * (1 - p) / n)
            if abs(share - p) > 4.5 * sd:
                bad.append("%s %s: %d bytes are %.3f of %d I/Os, the split says %.2f" % (tool, key, bs, share, n, p))
    if args["rw"] in ("read", "write"):
        moved = doc["read"]["io_bytes"] + doc["write"]["io_bytes"]
        if moved != size(args["size"]):
            bad.append("%s moved %d bytes of size=%s" % (tool, moved, args["size"]))
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
	); then
		pass "$name: both tools draw the split's sizes with its weights"
	else
		fail "$name: $out"
	fi
}
split_sizes bss_seq --name=bs --rw=write --size=8m --bssplit=4k/25:16k/75
split_sizes bss_iometer --name=im --rw=randrw --rwmixread=80 --size=8m --norandommap=1 \
	--bssplit=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10
split_sizes bss_dirs_mix --name=dm --rw=randrw --size=8m --norandommap=1 \
	--bssplit=2k/50:4k/50,4k/90:8k/10
split_sizes bsrange_seq --name=rs --rw=read --size=8m --bsrange=4k-16k
split_sizes bsrange_dirs --name=rd --rw=randrw --size=8m --norandommap=1 \
	--bsrange=1k-4k,8k-32k
split_sizes blockalign_split --name=ba --rw=randwrite --size=8m --norandommap=1 \
	--bssplit=1k/50:4k/50 --blockalign=8k

# same_offsets NAME ARGS...: both tools run a one-thread job with a per-I/O IOPS log and
# log_offset, and every I/O's direction, offset and size, in order, is the same in both logs
# (for options that decide the offsets: fio's rw=TYPE:N holes and backwards reads).
same_offsets() {
	local name=$1
	shift
	logged "$name" o "$@"
	offsets_agree "$name" o_iops.1.log
}

# offsets_agree NAME LOG: the per-I/O log LOG (with log_offset=1) that both tools wrote in their
# directories for NAME holds the same I/Os (direction, size, offset), in the same order.
offsets_agree() {
	local name=$1 log=$2 out
	if out=$(python3 - "$T/fio/$name/$log" "$T/llmio/$name/$log" 2>&1 <<'PY'
import sys

def ios(path):
    # direction, size, offset of every I/O (fio's columns 3, 4 and 5)
    return [tuple(int(x) for x in line.split(",")[2:5]) for line in open(path)]

f, l = ios(sys.argv[1]), ios(sys.argv[2])
if f != l:
    at = next((i for i, (a, b) in enumerate(zip(f, l)) if a != b), min(len(f), len(l)))
    print("%d I/Os in fio's log, %d in llmio's; the first difference at I/O %d: fio %s, "
          "llmio %s" % (len(f), len(l), at, f[at:at + 3], l[at:at + 3]))
    sys.exit(1)
PY
	); then
		pass "$name: $log: the same I/Os at the same offsets, in the same order"
	else
		fail "$name: $out"
	fi
}

echo "== rw=TYPE:N: fio's holes and backwards I/O"
same_offsets rw_skip_write --name=h --rw=write:12k --bs=4k --size=64k
same_offsets rw_skip_read_back --name=b --rw=read:-8k --bs=4k --size=64k
same_offsets rw_skip_loops --name=l --rw=read:-8k --bs=4k --size=32k --loops=2
same_offsets rw_skip_io_size --name=m --rw=write:8k --bs=4k --size=64k --io_size=128k
DIFFERS=verify side_by_side cl_rw_skip_verify --name=v --rw=write:16k --bs=16k --size=256k \
	--verify=crc32c

echo "== zonemode=strided: fio's zones (zone_strided.fio ran with the job files above)"
offsets_agree zone_strided part_iops.1.log
offsets_agree zone_strided again_iops.2.log

# zone_shares NAME ARGS...: a random job with random_distribution=zoned:... or zoned_abs:... and
# a per-I/O IOPS log with offsets through both tools; in both, every zone (its part of the file
# from the list: percent, a blank size the rest shared evenly, or bytes) gets its share of the
# I/Os within 4.5 standard deviations of a binomial draw, and no I/O lands outside the zones.
zone_shares() {
	local name=$1 out
	shift
	logged "$name" z "$@"
	if out=$(PYTHONPATH=$HERE python3 - "$T/fio/$name/z_iops.1.log" "$T/llmio/$name/z_iops.1.log" \
		"$@" 2>&1 <<'PY'
import math, sys

from fio_job_args import job_args, size
args = job_args(sys.argv[3:])
kind, text = args["random_distribution"].split(":", 1)
total = size(args["size"])
ents = [e.split("/") for e in text.split(":")]
zones, at = [], 0
if kind == "zoned_abs":
    for acc, sz in ents:
        zones.append((int(acc) / 100, at, at + size(sz)))
        at += size(sz)
else:
    given = sum(int(sz) for _, sz in ents if sz)
    blank = sum(1 for _, sz in ents if not sz)
    for acc, sz in ents:
        pct = int(sz) if sz else (100 - given) // blank
        zones.append((int(acc) / 100, total * at // 100, total * (at + pct) // 100))
        at += pct
bad = []
for tool, path in (("fio", sys.argv[1]), ("llmio", sys.argv[2])):
    offs = [int(line.split(",")[4]) for line in open(path)]
    n = len(offs)
    for p, lo, hi in zones:
        k = sum(1 for o in offs if lo <= o < hi)
        if abs(k / n - p) > 4.5 * math.sqrt(p * (1 - p) / n):
            bad.append("%s: %.3f of %d I/Os in [%d, %d), the zone's share is %.2f" % (tool, k / n, n, lo, hi, p))
    out = [o for o in offs if not any(lo <= o < hi for _, lo, hi in zones)]
    if out:
        bad.append("%s: %d I/Os outside the zones (%s)" % (tool, len(out), out[:3]))
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
	); then
		pass "$name: both tools give every zone its share of the I/Os"
	else
		fail "$name: $out"
	fi
}

echo "== random_distribution=zoned and zoned_abs"
zone_shares zoned --name=z --rw=randread --size=8m --norandommap=1 --number_ios=4000 \
	--random_distribution=zoned:50/5:30/15:20/
zone_shares zoned_abs --name=za --rw=randwrite --size=8m --norandommap=1 --number_ios=4000 \
	--random_distribution=zoned_abs:60/512k:30/1m:10/2m
zone_shares zoned_split --name=zs --rw=randrw --size=8m --norandommap=1 \
	--bssplit=4k/50:16k/50 --blockalign=4k --random_distribution=zoned:50/10:50/

# once_each NAME ARGS...: a random job through both tools with a per-I/O IOPS log and offsets
# (each thread's log); in both, no thread's log has an offset twice, and a one-thread job that
# moves its size once hits every block of the file once (fio's random map, norandommap=0).
once_each() {
	local name=$1 out
	shift
	logged "$name" m "$@"
	if out=$(PYTHONPATH=$HERE python3 - "$T/fio/$name" "$T/llmio/$name" "$@" 2>&1 <<'PY'
import glob, os, sys

from fio_job_args import job_args, size
args = job_args(sys.argv[3:])
bs, total = size(args["bs"]), size(args["size"])
bad = []
for tool, d in (("fio", sys.argv[1]), ("llmio", sys.argv[2])):
    logs = sorted(glob.glob(os.path.join(d, "m_iops.*.log")))
    for log in logs:
        offs = [int(line.split(",")[4]) for line in open(log)]
        if len(set(offs)) != len(offs):
            bad.append("%s %s: %d of %d offsets repeat" % (tool, os.path.basename(log),
                                                             len(offs) - len(set(offs)), len(offs)))
        if len(logs) == 1 and sorted(offs) != list(range(0, total, bs)):
            bad.append("%s: %d I/Os, not every block of the file once" % (tool, len(offs)))
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
	); then
		pass "$name: both tools hit each block once per thread (the random map)"
	else
		fail "$name: $out"
	fi
}

echo "== the random map (norandommap=0, fio's default)"
once_each map_randwrite --name=m --rw=randwrite --bs=4k --size=1m --ioengine=libaio --iodepth=16
once_each map_lfsr --name=l --rw=randread --bs=4k --size=512k --random_generator=lfsr
once_each map_randread_threads --name=t --rw=randread --bs=4k --size=1m --numjobs=2 --filename=f
DIFFERS=verify side_by_side cl_verify_randwrite --name=v --rw=randwrite --bs=4k --size=256k \
	--ioengine=libaio --iodepth=16 --verify=crc32c

# both_json NAME DESC EXPR: EXPR (Python, over j: the first job of out.json) holds for both tools
both_json() {
	local name=$1 desc=$2 expr=$3 tool
	for tool in fio llmio; do
		check "$name: $tool: $desc" python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$T/$tool/$name/out.json" "$expr"
	done
}

echo "== gtod_reduce and disable_*lat: what is still reported"
side_by_side cl_gtod --name=g --rw=write --size=256k --gtod_reduce=1
both_json cl_gtod "no latency reported (N 0, no percentiles)" \
	'all(j[d][l]["N"] == 0 and "percentile" not in j[d][l] for d in ("read", "write")
	     for l in ("slat_ns", "clat_ns", "lat_ns"))'
both_json cl_gtod "I/Os, bytes, IOPS and bandwidth still reported" \
	'j["write"]["total_ios"] == 64 and j["write"]["io_bytes"] == 262144 and
	 j["write"]["iops"] > 0 and j["write"]["bw_bytes"] > 0'
# long enough for per-second samples, which fio 3.33 keeps under gtod_reduce
for tool in fio llmio; do
	in_dir "$tool" cl_gtod_samples --name=s --ioengine=null --size=1m --runtime=1500ms \
		--time_based --gtod_reduce=1 --output-format=json --output=out.json
done
both_json cl_gtod_samples "a timed run: per-second samples, no latency, its I/Os counted" \
	'j["read"]["iops_samples"] > 0 and j["read"]["bw_samples"] > 0 and
	 j["read"]["clat_ns"]["N"] == 0 and j["read"]["total_ios"] > 0'
side_by_side cl_disable_clat --name=c --rw=read --size=256k --disable_clat=1
both_json cl_disable_clat "no clat, still lat" \
	'j["read"]["clat_ns"]["N"] == 0 and j["read"]["lat_ns"]["N"] == 64'

echo "== percentile switches at llmio's one setting"
side_by_side cl_percentile_switches --name=p --rw=read --size=64k --lat_percentiles=1 \
	--clat_percentiles=1 --slat_percentiles=0
both_json cl_percentile_switches "clat and lat percentiles, none of slat" \
	'"percentile" in j["read"]["clat_ns"] and "percentile" in j["read"]["lat_ns"] and
	 "percentile" not in j["read"]["slat_ns"]'

# clat_percentiles=0 (clat_percentiles_off.fio, run above): neither percentiles nor json+ bins
both_json clat_percentiles_off "no clat percentiles; clat still measured (N 16)" \
	'"percentile" not in j["read"]["clat_ns"] and j["read"]["clat_ns"]["N"] == 16'
for tool in fio llmio; do
	in_dir "$tool" cl_clat_pct_plus --name=c --rw=read --size=64k --clat_percentiles=0 \
		--output-format=json+ --output=out.json
done
both_json cl_clat_pct_plus "json+: no clat bins, the option echoed" \
	'"bins" not in j["read"]["clat_ns"] and "percentile" not in j["read"]["clat_ns"] and
	 j["job options"]["clat_percentiles"] == "0"'

echo "== numa_cpu_nodes, numa_mem_policy: the nodes of /sys/devices/system/node"
# fio applies cpus_allowed=0, then binds to node 0: a sched_setaffinity with exactly node 0's
# CPUs (strace sees it), which only the node can give when node 0 has more than one CPU
node0=$(cat /sys/devices/system/node/node0/cpulist 2>/dev/null)
mask=$(python3 -c 'import sys
print(" ".join(str(c) for r in sys.argv[1].split(",") for c in
               range(int(r.split("-")[0]), int(r.split("-")[-1]) + 1)))' "${node0:-x}" 2>/dev/null)
if ! command -v strace >/dev/null || [ "$(wc -w <<<"$mask")" -lt 2 ]; then
	echo "skip: numa_cpu_nodes needs strace and a node 0 of two CPUs or more (node 0: ${node0:-none})"
else
	for tool in fio llmio; do
		mkdir -p "$T/$tool/numa"
		(cd "$T/$tool/numa" && if [ $tool = fio ]; then
			strace -f -qq -e trace=sched_setaffinity -o st fio \
				"$CASES/numa/cpu_nodes.fio" --output=out.json >/dev/null
		else
			strace -f -qq -e trace=sched_setaffinity -o st "$LLMIO" run \
				"$CASES/numa/cpu_nodes.fio" --output=out.json >/dev/null
		fi)
		check "numa_cpu_nodes=0: $tool ran on node 0's CPUs [$mask]" \
			grep -q "sched_setaffinity(.*\[$mask\]" "$T/$tool/numa/st"
	done
fi
# a node that is not here: fio's libnuma fails it, and so does llmio (by name)
absent=$(($(sed 's/.*[-,]//' /sys/devices/system/node/online 2>/dev/null || echo 0) + 1))
for tool in fio llmio; do
	in_dir "$tool" numa_absent --name=n --rw=read --size=64k --numa_cpu_nodes=$absent
	check "numa_cpu_nodes=$absent (no such node): $tool fails (exit $RC)" test "$RC" -ne 0
	check "numa_cpu_nodes=$absent: $tool wrote no file" test ! -e "$T/$tool/numa_absent/n.0.0"
done
check "numa_cpu_nodes=$absent: llmio names the node" \
	grep -q "numa_cpu_nodes=$absent: node $absent is not on this machine" "$T/stderr"
# numa_mem_policy: the policies the job threads set (strace), one job per mode; libnuma's own
# probes (MPOL_PREFERRED_MANY, MPOL_DEFAULT) are fio's, not a job's
if command -v strace >/dev/null && [ -e /sys/devices/system/node/node0 ]; then
	for tool in fio llmio; do
		mkdir -p "$T/$tool/mpol"
		(cd "$T/$tool/mpol" && if [ $tool = fio ]; then
			strace -f -qq -e trace=set_mempolicy -o st fio "$CASES/numa/mem_policy.fio" \
				--output=out.json >/dev/null
		else
			strace -f -qq -e trace=set_mempolicy -o st "$LLMIO" run \
				"$CASES/numa/mem_policy.fio" --output=out.json >/dev/null
		fi)
	done
	if out=$(python3 - "$T/fio/mpol/st" "$T/llmio/mpol/st" <<'PY'
import re, sys
def policies(path):
    found = re.findall(r"set_mempolicy\((MPOL_(?:BIND|INTERLEAVE|PREFERRED|LOCAL)), \[(\w+)",
                       open(path).read())
    return sorted((m, int(w, 16)) for m, w in found)
f, l = policies(sys.argv[1]), policies(sys.argv[2])
want = [("MPOL_BIND", 1), ("MPOL_INTERLEAVE", 1), ("MPOL_LOCAL", 0), ("MPOL_PREFERRED", 1)]
print("fio %s, llmio %s" % (f, l))
sys.exit(0 if f == l == want else 1)
PY
	); then
		pass "numa_mem_policy: the same policies and nodes set ($out)"
	else
		fail "numa_mem_policy: the policies set differ: $out"
	fi
else
	echo "skip: numa_mem_policy needs strace and /sys/devices/system/node"
fi
for tool in fio llmio; do
	in_dir "$tool" mpol_absent --name=n --rw=read --size=64k --numa_mem_policy=bind:$absent
	check "numa_mem_policy=bind:$absent (no such node): $tool fails (exit $RC)" test "$RC" -ne 0
done
check "numa_mem_policy=bind:$absent: llmio names the node" \
	grep -q "numa_mem_policy=bind:$absent: node $absent is not on this machine" "$T/stderr"

echo "== rate_min (ratemin): a direction that moves less fails the job, as fio's"
for tool in fio llmio; do
	in_dir "$tool" rate_min_missed "$CASES/rate_min/missed.fio" --output-format=json \
		--output=out.json
	check "rate_min missed: $tool fails (exit $RC)" test "$RC" -eq 1
	in_dir "$tool" rate_min_met "$CASES/rate_min/met.fio" --output-format=json --output=out.json
	check "rate_min met: $tool ran (exit $RC)" test "$RC" -eq 0
	in_dir "$tool" rate_min_above "$CASES/rate_min/above_rate.fio"
	check "rate_min above rate: $tool refuses it (exit $RC)" test "$RC" -ne 0
	check "rate_min above rate: $tool wrote nothing" test ! -e "$T/$tool/rate_min_above/r.0.0"
done
jobs_json rate_min_missed "EIO (fio's error 5), the job stopped long before its 20 s" \
	'jobs["r"]["error"] == 5 and jobs["r"]["job_runtime"] < 15000'

echo "== unlink, create_on_open, io_submit_mode=inline"
side_by_side cl_unlink_write --name=u --rw=write --size=64k --unlink=1
side_by_side cl_unlink_read --name=u --rw=read --size=64k --nrfiles=2 --unlink=1
side_by_side cl_create_on_open --name=c --rw=write --size=64k --create_on_open=1
side_by_side cl_submit_inline --name=i --rw=write --size=64k --io_submit_mode=inline
side_by_side cl_fst_sequential --name=s --rw=write --size=64k --nrfiles=2 \
	--file_service_type=sequential
side_by_side cl_fst_random --name=r --rw=randwrite --size=64k --nrfiles=2 \
	--file_service_type=random
side_by_side cl_fst_one_file --name=o --rw=read --size=64k --file_service_type=roundrobin:4
# openfiles: llmio keeps a job's files open, so fewer than the job's files is refused by name
# (filecreate, which opens and closes each file in its I/O, takes any: fallocate's cases above)
side_by_side cl_openfiles_all --name=o --rw=read --size=64k --nrfiles=2 --openfiles=2
in_dir llmio openfiles_fewer --name=o --rw=read --size=64k --nrfiles=2 --openfiles=1
check "openfiles=1 over 2 files: refused (exit $RC)" test "$RC" -eq 2
check "openfiles: says what llmio does instead" grep -q "openfiles=1 with 2 files.*give openfiles=2" \
	"$T/stderr"
# llmio's one way per rw: a sequential job of several files refuses roundrobin (fio's default)
# by name, before it creates any file
in_dir llmio fst_refused --name=f --rw=write --size=64k --nrfiles=2 \
	--file_service_type=roundrobin
check "file_service_type=roundrobin, sequential, 2 files: refused (exit $RC)" test "$RC" -eq 2
check "file_service_type: says what llmio does instead" grep -q "give sequential" "$T/stderr"
check "file_service_type: no file was created" test ! -e "$T/llmio/fst_refused/f.0.0"
# a difference (docs/fio.md): llmio's unlink removes only what the job created; fio's would
# remove this file, which was there before
mkdir -p "$T/llmio/unlink_theirs"
head -c 65536 /dev/zero >"$T/llmio/unlink_theirs/t.0.0"
in_dir llmio unlink_theirs --name=t --rw=read --size=64k --unlink=1 --quiet
check "unlink: llmio ran (exit $RC)" test "$RC" -eq 0
check "unlink: a file that was there before the job stays" test -s "$T/llmio/unlink_theirs/t.0.0"
in_dir llmio submit_offload --name=o --rw=write --size=64k --io_submit_mode=offload
check "io_submit_mode=offload: refused (exit $RC)" test "$RC" -eq 2
check "io_submit_mode=offload: by name, saying why" grep -q "io_submit_mode=offload.*offload" \
	"$T/stderr"

echo "== refused by name: fio's engines llmio lacks, and their options"
# a section of an engine llmio lacks, with that engine's own option before and after it: the
# engine is named, on its line, with the nearest llmio engine (fio's examples/nfs.fio's form)
mkdir -p "$T/llmio/engine"
printf '[global]\nnfs_url=nfs://127.0.0.1/x\nioengine=nfs\nsize=64k\n[w]\nrw=write\nstonewall\n' \
	>"$T/llmio/engine/nfs.fio"
in_dir llmio engine "$T/llmio/engine/nfs.fio"
check "a fio engine's job file: refused (exit $RC)" test "$RC" -eq 2
check "it names the engine on its line, and what to use" \
	grep -q "nfs.fio:3: ioengine: unknown engine 'nfs': a fio engine llmio does not have; instead: psync" \
	"$T/stderr"
in_dir llmio engine --name=x --ioengine=libcufile --size=64k
check "--ioengine=libcufile: refused (exit $RC)" test "$RC" -eq 2
check "it names gds" grep -q "instead: gds" "$T/stderr"
side_by_side cl_engine_vsync --name=v --ioengine=vsync --rw=write --size=64k
side_by_side cl_engine_pvsync2 --name=p --ioengine=pvsync2 --rw=read --size=64k
printf '[r]\nsize=64k\nfilename\n' >"$T/llmio/engine/bare.fio"
in_dir llmio engine "$T/llmio/engine/bare.fio"
check "a bare option that needs a value: refused (exit $RC)" test "$RC" -eq 2
check "it names the option" grep -q "bare.fio:3: filename: .* needs a value" "$T/stderr"
printf '[s]\nioengine=rbd\nsize=64k\nbusy_poll\n' >"$T/llmio/engine/rbd.fio"
in_dir llmio engine "$T/llmio/engine/rbd.fio"
check "a bare option of a fio engine llmio lacks: the engine named (exit $RC)" \
	grep -q "rbd.fio:2: ioengine: unknown engine 'rbd'.*'busy_poll' on line 4" "$T/stderr"
printf '[r]\nsize=64k\nrefill_buffers\n' >"$T/llmio/engine/refused.fio"
in_dir llmio engine "$T/llmio/engine/refused.fio"
check "a bare fio option llmio refuses: by name (exit $RC)" grep -q "refill_buffers: a fio option" \
	"$T/stderr"
printf '[a]\nsize=64k\n[b]\nsize=64k\nwait_for=c\n[c]\nsize=64k\n' >"$T/llmio/engine/waitee.fio"
in_dir llmio engine "$T/llmio/engine/waitee.fio"
check "wait_for a job that is not earlier: refused (exit $RC)" test "$RC" -eq 2
check "it names the job" grep -q "wait_for=c: no earlier job" "$T/stderr"
check "nothing ran" test ! -e "$T/llmio/engine/a.0.0"

# prio_trace NAME FILE CLASS...: `llmio run FILE` under strace, its trace in $T/llmio/NAME/trace;
# each CLASS ("RT, 0") some command's aio_reqprio, and the kernel refused no io_submit.  Without
# strace, says so and returns 1.
prio_trace() {
	local name=$1 file=$2 v
	shift 2
	if ! command -v strace >/dev/null; then
		echo "skip: $name: strace is not installed (the kernel's word on the priorities)"
		return 1
	fi
	mkdir -p "$T/llmio/$name" && cd "$T/llmio/$name" || exit 1
	strace -f -o trace -e trace=ioprio_set,io_submit "$LLMIO" run "$file" --quiet >/dev/null 2>&1
	for v in "$@"; do
		check "$name: io_submit carried IOPRIO_CLASS_$v" \
			grep -q "aio_reqprio=IOPRIO_PRIO_VALUE(IOPRIO_CLASS_$v)" trace
	done
	check "$name: the kernel refused none" test -z "$(grep 'io_submit.*= -1' trace)"
	cd "$T" || exit 1
}

echo "== I/O priorities: prioclass, cmdprio_percentage, cmdprio_class, log_prio"
# the realtime class needs CAP_SYS_ADMIN (or CAP_SYS_NICE): both tools refuse it without
if [ "$(id -u)" -eq 0 ]; then
	for tool in fio llmio; do
		in_dir "$tool" prio "$CASES/prio/cmdprio.fio" --output-format=json --output=out.json
		check "prio: $tool ran (exit $RC)" test "$RC" -eq 0
	done
	# each thread's log: every I/O a line, in the idle class (0x6000) or, for about a fifth
	# (within 4.5 standard deviations of a binomial draw), realtime (0x2000)
	if out=$(python3 - "$T/fio/prio" "$T/llmio/prio" 2>&1 <<'PY'
import math, os, sys
bad = []
for d in sys.argv[1:]:
    tool = os.path.basename(os.path.dirname(d))
    for n in (1, 2):
        vals = [l.split(",")[-1].strip() for l in open(os.path.join(d, "p_clat.%d.log" % n))]
        rt, share = vals.count("0x2000"), vals.count("0x2000") / max(len(vals), 1)
        if len(vals) != 2000 or set(vals) - {"0x2000", "0x6000"}:
            bad.append("%s log %d: %d lines, values %s" % (tool, n, len(vals), sorted(set(vals))))
        elif abs(share - 0.2) > 4.5 * math.sqrt(0.2 * 0.8 / 2000):
            bad.append("%s log %d: %d of 2000 realtime" % (tool, n, rt))
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
	); then
		pass "prio: both tools' logs: idle I/Os and a fifth realtime, per engine"
	else
		fail "prio: $out"
	fi
	# the kernel took llmio's priorities: the thread's class, and each command's (no EINVAL)
	if prio_trace prio_strace "$CASES/prio/cmdprio.fio" "RT, 0"; then
		check "prio: ioprio_set in the idle class succeeded" \
			grep -q "ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) = 0" \
			"$T/llmio/prio_strace/trace"
	fi
else
	echo "skip: prio: the realtime class needs root"
fi
in_dir llmio prio_psync --name=p --ioengine=psync --size=64k --cmdprio_percentage=20
check "cmdprio_percentage with psync: refused (exit $RC)" test "$RC" -eq 2
check "it names the engines that have it" grep -q "libaio's and io_uring's" "$T/stderr"

echo "== I/O priorities per block size: cmdprio_bssplit"
if [ "$(id -u)" -eq 0 ]; then
	for tool in fio llmio; do
		in_dir "$tool" prio_bss "$CASES/prio/cmdprio_bssplit.fio" --output-format=json \
			--output=out.json
		check "prio_bss: $tool ran (exit $RC)" test "$RC" -eq 0
	done
	# each thread's log: per direction and block size, the share of each priority value what
	# the job file says (within 4.5 standard deviations of a binomial draw), and the two tools
	# within as much of each other; an I/O of another size (fio trims one to its random map's
	# free blocks) keeps the thread's idle class
	if out=$(python3 - "$T/fio/prio_bss" "$T/llmio/prio_bss" 2>&1 <<'PY'
import collections, math, os, sys
IDLE = "0x6000"
WANT = {  # log number: {(direction, size): {priority: share}}
    1: {(0, 4096): {"0x2002": .4, IDLE: .6}, (0, 16384): {IDLE: 1},
        (1, 4096): {IDLE: 1}, (1, 8192): {"0x2002": .7, IDLE: .3}},
    2: {(0, 4096): {"0x2001": .25, "0x4005": .5, IDLE: .25},
        (0, 16384): {"0x4007": .3, IDLE: .7},
        (1, 4096): {"0x4004": 1}, (1, 8192): {"0x2007": .2, IDLE: .8}},
}
def load(d, n):
    got = collections.defaultdict(collections.Counter)
    for line in open(os.path.join(d, "b_clat.%d.log" % n)):
        f = [x.strip() for x in line.split(",")]
        got[(int(f[2]), int(f[3]))][f[-1]] += 1
    return got
bad = []
for n, want in WANT.items():
    logs = {os.path.basename(os.path.dirname(d)): load(d, n) for d in sys.argv[1:]}
    for tool, got in logs.items():
        for key, vals in got.items():
            total, exp = sum(vals.values()), want.get(key, {IDLE: 1})
            if set(vals) - set(exp):
                bad.append("%s log %d %s: values %s" % (tool, n, key, dict(vals)))
            elif key in want and total < 200:
                bad.append("%s log %d %s: %d I/Os" % (tool, n, key, total))
            for v, p in exp.items():
                if abs(vals[v] / total - p) > 4.5 * math.sqrt(p * (1 - p) / total):
                    bad.append("%s log %d %s: %s %d of %d, not %g" % (tool, n, key, v, vals[v],
                                                                     total, p))
        if set(want) - set(got):
            bad.append("%s log %d: no I/Os of %s" % (tool, n, sorted(set(want) - set(got))))
    f, l = logs["fio"], logs["llmio"]
    for key, exp in want.items():
        nf, nl = sum(f[key].values()), sum(l[key].values())
        for v, p in exp.items():
            if nf and nl and abs(f[key][v] / nf - l[key][v] / nl) > \
                    4.5 * math.sqrt(p * (1 - p) * (1 / nf + 1 / nl)):
                bad.append("log %d %s %s: fio %d of %d, llmio %d of %d" % (n, key, v, f[key][v],
                                                                       nf, l[key][v], nl))
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
	); then
		pass "prio_bss: both tools' logs: each size's shares of each priority, as written"
	else
		fail "prio_bss: $out"
	fi
	# the kernel took each share's priority (the libaio job: each a command's aio_reqprio)
	prio_trace prio_bss_strace "$CASES/prio/cmdprio_bssplit.fio" "RT, 1" "BE, 5" "BE, 7" \
		"BE, 4" "RT, 7"
else
	echo "skip: prio_bss: the realtime class needs root"
fi
in_dir llmio prio_bss_psync --name=p --ioengine=psync --size=64k --cmdprio_bssplit=4k/20
check "cmdprio_bssplit with psync: refused (exit $RC)" test "$RC" -eq 2
in_dir llmio prio_bss_both --name=p --ioengine=libaio --size=64k --cmdprio_bssplit=4k/20 \
	--cmdprio_percentage=10
check "cmdprio_bssplit with cmdprio_percentage: refused, as fio (exit $RC)" test "$RC" -eq 2
check "it names both" grep -q "cmdprio_bssplit=4k/20: not with cmdprio_percentage" "$T/stderr"
in_dir llmio prio_bss_form --name=p --ioengine=libaio --size=64k --cmdprio_bssplit=4k/20/1
check "cmdprio_bssplit BS/PERCENT/CLASS without LEVEL: refused, as fio (exit $RC)" \
	test "$RC" -eq 2
in_dir llmio prio_bss_sum --name=p --ioengine=libaio --size=64k \
	--cmdprio_bssplit=4k/60/1/0:4k/50/2/0
check "cmdprio_bssplit shares of one size above 100: refused, as fio (exit $RC)" \
	test "$RC" -eq 2
check "it names the size" grep -q "shares of size 4k add up to more than 100" "$T/stderr"

echo "== verify: a flipped byte is caught by both, in the same block"
# flip FILE [AT]: one bit of the byte at AT (40000)
flip() {
	python3 -c 'import sys
at = int(sys.argv[2])
with open(sys.argv[1], "r+b") as f:
    f.seek(at); b = f.read(1); f.seek(at); f.write(bytes([b[0] ^ 1]))' "$1" "${2:-40000}"
}
for tool in fio llmio; do
	flip "$T/$tool/cl_verify_write/v.0.0"
	in_dir "$tool" cl_verify_write --name=v --rw=read --size=64k --bs=16k --verify=crc32c
	check "$tool: the read fails (exit $RC)" test "$RC" -eq 1
	check "$tool: it names the block at offset 32768" grep -q "offset 32768" "$T/stderr"
done
# crc64 over random writes in flight together (the random map); meta checks the header alone,
# so a flipped byte of the data passes both (fio's meta has no digest of the data)
for tool in fio llmio; do
	flip "$T/$tool/cl_verify_crc64/v.0.0"
	in_dir "$tool" cl_verify_crc64 --name=v --rw=read --size=64k --bs=4k --verify=crc64
	check "$tool: crc64: the read fails (exit $RC)" test "$RC" -eq 1
	check "$tool: crc64: it names the block at offset 36864" grep -q "offset 36864" "$T/stderr"
	flip "$T/$tool/cl_verify_meta/v.0.0"
	in_dir "$tool" cl_verify_meta --name=v --rw=read --size=64k --bs=16k --verify=meta
	check "$tool: meta: a flipped data byte is not looked at (exit $RC)" test "$RC" -eq 0
done

echo "== dedupe: the same share of duplicate blocks in the files both tools wrote"
# share NAME BS FILE...: tests/dedupe_share.py's "blocks distinct share" of the files in NAME
share() {
	local name=$1 bs=$2 tool
	shift 2
	for tool in fio llmio; do
		(cd "$T/$tool/$name" && python3 "$HERE/dedupe_share.py" "$bs" "$@") || echo "0 0 1"
	done
}
# near P FIO LLMIO: each share within 4 standard deviations of P (a binomial over the blocks),
# and of each other within as many of their difference
near() {
	python3 -c 'import math, sys
p = float(sys.argv[1]); f = sys.argv[2].split(); l = sys.argv[3].split()
sd = math.sqrt(p * (1 - p) / int(f[0]))
ok = abs(float(f[2]) - p) <= 4 * sd and abs(float(l[2]) - p) <= 4 * sd and \
    abs(float(f[2]) - float(l[2])) <= 4 * sd * math.sqrt(2)
sys.exit(0 if ok and f[0] == l[0] else 1)' "$@"
}
for c in repeat:4096:0.5 working_set:8192:0.3; do
	IFS=: read -r name bs p <<<"$c"
	side_by_side "dedupe_$name" "$CASES/dedupe/$name.fio"
	mapfile -t s < <(share "dedupe_$name" "$bs" d.0.0)
	check "dedupe $name: $p of the blocks repeat (fio ${s[0]}, llmio ${s[1]})" \
		near "$p" "${s[0]}" "${s[1]}"
done
side_by_side dedupe_global "$CASES/dedupe/global.fio"
mapfile -t s < <(share dedupe_global 4096 a.0.0 b.0.0)
check "dedupe_global: both files together, 0.5 repeat (fio ${s[0]}, llmio ${s[1]})" \
	near 0.5 "${s[0]}" "${s[1]}"
mapfile -t a < <(share dedupe_global 4096 a.0.0)
# (each file's own duplicates, a third here, but not the other's: fewer than together)
check "dedupe_global: each file alone holds fewer (fio ${a[0]}, llmio ${a[1]})" python3 -c '
import sys
t, a = sys.argv[1:3], sys.argv[3:5]
sys.exit(0 if all(0.2 < float(a[i].split()[2]) < float(t[i].split()[2]) - 0.1
                  for i in (0, 1)) else 1)' \
	"${s[0]}" "${s[1]}" "${a[0]}" "${a[1]}"
# without dedupe options, two jobs of one file write blocks found nowhere else, across the
# files too (a block repeated in the other job's file is what a deduplicating device drops)
side_by_side dedupe_two_jobs "$CASES/dedupe/two_jobs.fio"
mapfile -t s < <(share dedupe_two_jobs 4096 a.0.0 b.0.0)
check "two jobs, no dedupe: no 4 KiB block repeats in either file or across (fio ${s[0]}, llmio ${s[1]})" \
	test "${s[0]}" = "512 512 0.0000" -a "${s[1]}" = "512 512 0.0000"
# the read-back of the duplicates passes in both (the exit status) and reads what was written
DIFFERS=verify side_by_side dedupe_verify "$CASES/dedupe/verify.fio"

echo "== buffer_pattern: the files both tools write are the same bytes"
for c in mixed odd; do
	side_by_side "pattern_$c" "$CASES/pattern/$c.fio"
	check "pattern $c: the same bytes" cmp "$T/fio/pattern_$c/p.0.0" "$T/llmio/pattern_$c/p.0.0"
done
in_dir llmio pattern_bad --name=p --rw=write --size=64k --buffer_pattern=%o
check "buffer_pattern=%o: refused (exit $RC), by name" \
	grep -q "buffer_pattern=%o: not fio's pattern" "$T/stderr"

echo "== verify_pattern: fio's meta layout and pattern, so each tool checks the other's blocks"
# same_but_time INTERVAL A B: the files are the same bytes but for what fio's header keeps of
# the write's time (bytes 24-31 of every interval) and the header checksum over it (36-39)
same_but_time() {
	python3 -c 'import sys
n = int(sys.argv[1]); a, b = (bytearray(open(p, "rb").read()) for p in sys.argv[2:4])
for d in (a, b):
    for at in range(0, len(d), n):
        d[at + 24:at + 32] = bytes(8); d[at + 36:at + 40] = bytes(4)
sys.exit(0 if a == b and a else 1)' "$@"
}
# the top-level verify_pattern.fio (above) wrote and read v.0 in both tools
check "verify_pattern: llmio wrote fio's bytes (but for each header's time)" \
	same_but_time 512 "$T/fio/verify_pattern/v.0" "$T/llmio/verify_pattern/v.0"
DIFFERS=verify side_by_side vp_readback "$CASES/verify_pattern/readback.fio"
check "verify_pattern: a 10-byte pattern under a header every 4k: fio's bytes" \
	same_but_time 4096 "$T/fio/vp_readback/w.0.0" "$T/llmio/vp_readback/w.0.0"
for tool in fio llmio; do
	other=$([ "$tool" = fio ] && echo llmio || echo fio)
	mkdir -p "$T/$tool/vp_cross"
	cp "$T/$other/verify_pattern/v.0" "$T/$tool/vp_cross/v.0"
	in_dir "$tool" vp_cross "$CASES/verify_pattern/read.fio"
	check "verify_pattern: $tool checks $other's file (exit $RC)" test "$RC" -eq 0
	# a flipped byte in a block's last interval fails both, named by its interval
	flip "$T/$tool/vp_cross/v.0" 130972
	in_dir "$tool" vp_cross "$CASES/verify_pattern/read.fio"
	check "$tool: verify_pattern: a flipped byte fails the read (exit $RC)" test "$RC" -eq 1
	check "$tool: it names the interval at offset 130560" grep -q "offset 130560" "$T/stderr"
	# in a block's middle both name it too (fio then exits 0: without verify_fatal, its
	# check of a block keeps the outcome of the block's last interval)
	cp "$T/$other/verify_pattern/v.0" "$T/$tool/vp_cross/v.0"
	flip "$T/$tool/vp_cross/v.0" 70000
	in_dir "$tool" vp_cross "$CASES/verify_pattern/read.fio"
	check "$tool: a flipped byte mid-block: the interval at offset 69632 is named" \
		grep -q "offset 69632" "$T/stderr"
done
check "llmio: a flipped byte mid-block fails the read (exit $RC)" test "$RC" -eq 1
in_dir llmio vp_alone --name=p --rw=write --size=64k --verify_pattern=0xaa
check "verify_pattern without verify: refused (exit $RC), by name" \
	grep -q "verify_pattern without verify" "$T/stderr"

echo "== buffer_compress_percentage: each block compresses alike, its zeros where fio's are"
# NAME:BS:SHARE:FILES (the share of each block's bytes kept, what it compresses to about)
for c in chunk:8192:0.25:c.0.0 "dedupe:4096:0.5:a.0.0 b.0.0"; do
	IFS=: read -r name bs p files <<<"$c"
	side_by_side "compress_$name" "$CASES/compress/$name.fio"
	# shellcheck disable=SC2086 # FILES are words
	mapfile -t r < <(for tool in fio llmio; do
		(cd "$T/$tool/compress_$name" && python3 "$HERE/compress_ratio.py" "$bs" $files) ||
			echo "1 none"
	done)
	check "compress $name: blocks compress to about $p, zeros alike (fio ${r[0]}, llmio ${r[1]})" \
		python3 -c 'import sys
p = float(sys.argv[1]); (f, fz), (l, lz) = (a.split() for a in sys.argv[2:4])
sys.exit(0 if abs(float(f) - float(l)) <= 0.01 and p <= float(l) <= p + 0.05 and
         fz == lz != "none" else 1)' "$p" "${r[0]}" "${r[1]}"
done
# with dedupe's options (fio's dedupe-global.fio): the duplicates are still fio's share
mapfile -t s < <(share compress_dedupe 4096 a.0.0 b.0.0)
check "compress with dedupe: both files together, 0.5 repeat (fio ${s[0]}, llmio ${s[1]})" \
	near 0.5 "${s[0]}" "${s[1]}"

echo "== fill_device: the writes end where the filesystem is full, fio's end, exit 0"
# A tmpfs of its own (root only): both tools fill it from empty, with and without size, through
# a sync and an async engine.  Witnesses: statvfs (df) says the filesystem is full after each,
# both files hold the free bytes, and so does llmio's io_bytes.  fio leaves a last short write
# out of its io_bytes (the rest of it, retried, is refused) and counts the refused writes in
# total_ios; llmio counts the bytes that landed and the writes that wrote (docs/fio.md).
FILL=$T/fillfs
mkdir -p "$FILL"
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=8m tmpfs "$FILL" 2>/dev/null; then
	echo "skip: fill_device needs a tmpfs of its own (root, mount -t tmpfs)"
else
	on_exit() { umount "$FILL"; }
	declare -A got
	# ENGINE:SIZE:PAD (a 4 KiB file first: the free bytes are no multiple of bs)
	for c in psync:16m: libaio:16m: io_uring:: psync::pad; do
		IFS=: read -r eng sz pad <<<"$c"
		for tool in fio llmio; do
			[ -n "$pad" ] && head -c 4096 /dev/zero >"$FILL/pad"
			free=$(stat -f -c '%f * %S' "$FILL")
			free=$((free))
			args=(--name=fill --filename="$FILL/f" --rw=write --bs=64k --fill_device=1
				--ioengine="$eng" --iodepth=8 --output-format=json
				--output="$T/fill.$tool.json")
			[ -n "$sz" ] && args+=(--size="$sz")
			if [ "$tool" = fio ]; then
				run fio "${args[@]}"
			else
				run "$LLMIO" run "${args[@]}"
			fi
			blocks=$(stat -f -c %f "$FILL")
			check "fill_device $eng size=${sz:-none}, $tool: exit $RC, the filesystem full ($blocks blocks left)" \
				test "$RC" -eq 0 -a "$blocks" -eq 0
			got[$tool]="$(stat -c %s "$FILL/f") $(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["jobs"][0]["write"]["io_bytes"])' "$T/fill.$tool.json")"
			rm -f "$FILL/f" "$FILL/pad"
		done
		check "fill_device $eng size=${sz:-none}${pad:+, a pad first}: file and io_bytes the free $free bytes (fio ${got[fio]}, llmio ${got[llmio]})" \
			python3 -c 'import sys
free = int(sys.argv[1])
(ff, fb), (lf, lb) = (map(int, a.split()) for a in sys.argv[2:4])
sys.exit(0 if ff == lf == lb == free and free - 65536 < fb <= free else 1)' "$free" "${got[fio]}" "${got[llmio]}"
	done
	# already full: nothing to size the job at (fio writes nothing and exits 0)
	head -c 16m /dev/zero >"$FILL/pad" 2>/dev/null
	run "$LLMIO" run --name=fill --filename="$FILL/f" --rw=write --bs=64k --fill_device=1
	check "fill_device on a full filesystem, no size: llmio fails (exit $RC), saying so" \
		grep -q "has no free space to fill; free some, or give size" "$T/stderr"
	check "fill_device on a full filesystem: nothing left behind" test ! -e "$FILL/f"
	rm -f "$FILL/pad"
fi
in_dir llmio fill_null --name=n --ioengine=null --rw=write --fill_device=1
check "fill_device without size on an engine without files: refused (exit $RC), by name" \
	grep -q "fill_device with ioengine=null: it fills a filesystem's files" "$T/stderr"
in_dir llmio fill_read --name=r --rw=randread --fill_device=1
check "fill_device without size for a job that reads: refused (exit $RC), by name" \
	grep -q "fill_device without size with rw=randread" "$T/stderr"

finish
