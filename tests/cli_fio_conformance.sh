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
KEYS=$(cd "$(dirname "$0")" && pwd)/fio_json_keys.py

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
# reads and saves its verify state to a file, llmio keeps it out of the measured window.
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
    found = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            if os.path.relpath(p, d) != "out.json" and not (VERIFY and
                                                             n.endswith("-verify.state")):
                found[os.path.relpath(p, d)] = os.path.getsize(p)
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
	side_by_side "$(basename "$f" .fio)" "$f"
done

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

echo "== bssplit: one size per direction moves the same bytes in the same I/Os"
side_by_side cl_bssplit_dirs --name=bd --rw=write --size=256k --bssplit=4k/100,16k/100
side_by_side cl_bssplit_read --name=br --rw=read --size=256k --bssplit=8k,4k

# split_sizes NAME JOB ARGS...: both tools run the job with a per-I/O IOPS log (its 4th column
# is each I/O's size); every direction's sizes are the split's, each with its weight's share of
# the direction's I/Os (within 4.5 standard deviations of a binomial draw, a bound neither
# tool's fixed seed crosses by chance), and a sequential job moves exactly its size in both.
split_sizes() {
	local name=$1 out
	shift
	in_dir fio "$name" "$@" --write_iops_log=s --output-format=json --output=out.json
	check "$name: fio ran (exit $RC)" test "$RC" -eq 0
	in_dir llmio "$name" "$@" --write_iops_log=s --output-format=json --output=out.json
	check "$name: llmio ran (exit $RC)" test "$RC" -eq 0
	if out=$(python3 - "$T/fio/$name" "$T/llmio/$name" "$@" 2>&1 <<'PY'
import glob, json, math, os, sys

args = dict(a[2:].split("=", 1) for a in sys.argv[3:] if "=" in a)
UNIT = {"": 1, "k": 1024, "m": 1024 ** 2}
def size(t):
    t = t.lower()
    return int(t.rstrip("km")) * UNIT[t[-1] if t[-1] in "km" else ""]
lists = args["bssplit"].split(",")
want = {}
for d, text in enumerate(lists[:2] if len(lists) > 1 else lists * 2):
    want[d] = {size(e.split("/")[0]): int(e.split("/")[1]) / 100 for e in text.split(":")}
bad = []
for tool, d in (("fio", sys.argv[1]), ("llmio", sys.argv[2])):
    seen = {0: {}, 1: {}}
    for log in glob.glob(os.path.join(d, "s_iops.*.log")):
        for line in open(log):
            f = [x.strip() for x in line.split(",")]
            seen[int(f[2])][int(f[3])] = seen[int(f[2])].get(int(f[3]), 0) + 1
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
printf '[r]\nsize=64k\nwrite_bw_log\n' >"$T/llmio/engine/bare.fio"
in_dir llmio engine "$T/llmio/engine/bare.fio"
check "a bare option that needs a value: refused (exit $RC)" test "$RC" -eq 2
check "it names the option" grep -q "bare.fio:3: write_bw_log: .* needs a value" "$T/stderr"
printf '[s]\nioengine=net\nsize=64k\nlisten\n' >"$T/llmio/engine/net.fio"
in_dir llmio engine "$T/llmio/engine/net.fio"
check "a bare option of a fio engine llmio lacks: the engine named (exit $RC)" \
	grep -q "net.fio:2: ioengine: unknown engine 'net'.*'listen' on line 4" "$T/stderr"
printf '[r]\nsize=64k\nexitall\n' >"$T/llmio/engine/exitall.fio"
in_dir llmio engine "$T/llmio/engine/exitall.fio"
check "a bare fio option llmio refuses: by name (exit $RC)" grep -q "exitall: a fio option" \
	"$T/stderr"

echo "== verify: a flipped byte is caught by both, in the same block"
for tool in fio llmio; do
	python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(40000); b = f.read(1); f.seek(40000); f.write(bytes([b[0] ^ 1]))' \
		"$T/$tool/cl_verify_write/v.0.0"
	in_dir "$tool" cl_verify_write --name=v --rw=read --size=64k --bs=16k --verify=crc32c
	check "$tool: the read fails (exit $RC)" test "$RC" -eq 1
	check "$tool: it names the block at offset 32768" grep -q "offset 32768" "$T/stderr"
done

finish
