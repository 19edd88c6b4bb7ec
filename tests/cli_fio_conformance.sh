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
            (j["write"]["io_bytes"], j["write"]["total_ios"]) for j in doc["jobs"]]

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
    bad.append("jobs (name, group, read bytes, I/Os, write bytes, I/Os): fio %s, llmio %s"
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

echo "== command lines"
side_by_side cl_two_names --name=a --rw=write --size=64k --name=b --rw=randwrite --size=32k \
	--bs=8k
side_by_side cl_global_first --size=64k --bs=8k --name=x --rw=write --name=y --rw=write \
	--bs=4k --stonewall
side_by_side cl_runtime_bytes --name=rt --rw=read --size=64k --runtime=60
side_by_side cl_directory_list --name=d --rw=write --size=64k --directory=sub --filename=f:g
DIFFERS=verify side_by_side cl_verify_write --name=v --rw=write --size=64k --bs=16k --verify=crc32c

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
