#!/bin/bash
# fio_examples.sh: fio's own example job files (fio's examples/ folder, the corpus of what fio
# users bring) run through `llmio run` as they are, shrunk to this machine, and each classified
# (docs/fio.md, "fio's examples"):
#
#   ran       llmio exited 0
#   refused   llmio stopped before any I/O with exit 2 (a usage refusal: one line naming the
#             option, value or engine it does not do, and what to use instead)
#   failed    anything else: a crash or a signal, the timeout, a runtime error (exit 1), "unknown
#             option" or "unknown key", a line it cannot read (each a bug to fix or a refusal
#             to write)
#
# With fio on PATH the same shrunk file runs through fio too, as the reference of what can run on
# this machine at all (an engine whose library or hardware is absent fails in fio as well).
#
# Usage: bench/fio_examples.sh [-o TSV] EXAMPLES
#   EXAMPLES  fio's examples/ folder, or a clone of fio's git repository (its HEAD's examples/
#             are read with git show; nothing is copied into this project)
#   -o TSV    also write one line per file: name, llmio's class, fio's class, llmio's message
# Environment: LLMIO (default build/llmio), SIZE (default 16m), RUNTIME (default 2, seconds),
# TIMEOUT (default 60, seconds per tool and file), FIO (default fio; FIO= skips fio).
#
# What the shrinking overrides, and nothing else (a copy of each file, in a scratch folder):
#   - a [global] section first with size=SIZE and runtime=RUNTIME, so that a job without a size
#     (fio's examples often run on a whole device) has one that fits;
#   - size, filesize, io_size (io_limit): a value above SIZE, or one that is not plain bytes
#     (30%, 128z), becomes SIZE;
#   - runtime (timeout), ramp_time, startdelay: a value above RUNTIME seconds becomes RUNTIME
#     (1mbs_clients starts 32 jobs 4 s apart: over two minutes, unshrunk, in both tools);
#   - filename: each ':'-separated name becomes its last path component, in the scratch folder
#     (filename=/dev/nvme0n1 is the file nvme0n1 there); directory: the scratch folder.
# Each file runs in an empty scratch folder of its own, removed after.
set -u

usage() {
	echo "usage: $0 [-o TSV] EXAMPLES (fio's examples/ folder or fio's git repository)" >&2
	exit 2
}
TSV=
while getopts o: opt; do
	case $opt in
	o) TSV=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
SRC=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
LLMIO=${LLMIO:-$HERE/build/llmio}
SIZE=${SIZE:-16m}
RUNTIME=${RUNTIME:-2}
TIMEOUT=${TIMEOUT:-60}
FIO=${FIO-fio}
[ -x "$LLMIO" ] || { echo "$0: $LLMIO is not built (cmake --build build)" >&2; exit 2; }
[ -n "$FIO" ] && ! command -v "$FIO" >/dev/null && FIO=
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/fio_examples.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

# the example files: names, and a command that prints one
if [ -d "$SRC/examples" ] && git --git-dir="$SRC/.git" rev-parse HEAD >/dev/null 2>&1; then
	SRC=$SRC/.git
fi
if git --git-dir="$SRC" rev-parse HEAD >/dev/null 2>&1; then
	NAMES=$(git --git-dir="$SRC" ls-tree --name-only HEAD examples/ | grep '\.fio$' | sed 's|^examples/||')
	show() { git --git-dir="$SRC" show "HEAD:examples/$1"; }
	WHAT="fio $(git --git-dir="$SRC" describe --tags --always HEAD 2>/dev/null) examples/"
elif [ -d "$SRC" ]; then
	NAMES=$(cd "$SRC" && ls -- *.fio)
	show() { cat "$SRC/$1"; }
	WHAT=$SRC
else
	usage
fi

# shrink FILE SIZE RUNTIME DIR: the job file on stdin, shrunk as the header says, on stdout
shrink() {
	python3 -c '
import re, sys
size_s, runtime, scratch = sys.argv[1], float(sys.argv[2]), sys.argv[3]
UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
def nbytes(v):
    m = re.fullmatch(r"(\d+)\s*([kmgtp]?)(i?b)?", v.strip().lower())
    return int(m.group(1)) * UNITS[m.group(2)] if m else None
def secs(v):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(us|ms|s|m|h|d)?", v.strip().lower())
    if not m:
        return None
    return float(m.group(1)) * {None: 1, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600,
                                "d": 86400}[m.group(2)]
size = nbytes(size_s)
out = ["[global]", "size=" + size_s, "runtime=%g" % runtime]
for line in sys.stdin.read().splitlines():
    m = re.match(r"(\s*)([A-Za-z_]+)(\s*=\s*)([^;#]*?)(\s*[;#].*)?$", line)
    if m:
        key, val = m.group(2).lower(), m.group(4)
        if key in ("size", "filesize", "io_size", "io_limit"):
            b = nbytes(val)
            if b is None or b > size:
                val = size_s
        elif key in ("runtime", "timeout", "ramp_time", "startdelay"):
            s = secs(val)
            if s is None or s > runtime:
                val = "%g" % runtime
        elif key == "filename":
            val = ":".join(p.rstrip("/").split("/")[-1] or "file"
                           for p in re.split(r"(?<!\\):", val))
        elif key == "directory":
            val = scratch
        line = m.group(1) + m.group(2) + m.group(3) + val + (m.group(5) or "")
    out.append(line)
print("\n".join(out))
' "$SIZE" "$RUNTIME" "$1"
}

# try TOOL NAME FILE: run it in an empty folder; its class in CLASS, its message in MSG
try() {
	local tool=$1 name=$2 file=$3 dir="$SCRATCH/$1/$2" rc
	mkdir -p "$dir"
	shrink "$dir" <"$file" >"$dir.fio"
	if [ "$tool" = fio ]; then
		(cd "$dir" && timeout -k 5 "$TIMEOUT" "$FIO" "$dir.fio" >"$dir.out" 2>&1)
	else
		(cd "$dir" && timeout -k 5 "$TIMEOUT" "$LLMIO" run "$dir.fio" >"$dir.out" 2>&1)
	fi
	rc=$?
	# the message as it names the original file: its name, and its line (3 lines were added)
	MSG=$(grep -m1 -E '^(llmio|fio|error|Bad)' "$dir.out" | tr '\t' ' ' | cut -c1-300 |
		perl -pe 's{\Q'"$dir"'\E\.fio:(\d+):}{"'"$2"'.fio:" . ($1 - 3) . ":"}e')
	[ -n "$MSG" ] || MSG=$(tail -n1 "$dir.out" | tr '\t' ' ' | cut -c1-300)
	rm -rf "$dir"
	if [ $rc -eq 0 ]; then
		CLASS=ran
	elif [ $rc -ge 124 ]; then
		MSG="exit $rc (timeout or signal) $MSG"
		CLASS=failed
	elif [ "$tool" = llmio ] && [ $rc -eq 2 ] &&
		! grep -qE "unknown option|unknown key|not a key=value line" <<<"$MSG"; then
		CLASS=refused
	else
		CLASS=failed
	fi
}

ran=0 refused=0 failed=0 fio_ran=0 both=0 total=0
[ -n "$TSV" ] && printf 'file\tllmio\tfio\tllmio says\n' >"$TSV"
for name in $NAMES; do
	show "$name" >"$SCRATCH/in.fio" || continue
	try llmio "${name%.fio}" "$SCRATCH/in.fio"
	l=$CLASS lmsg=$MSG f=-
	if [ -n "$FIO" ]; then try fio "${name%.fio}" "$SCRATCH/in.fio"; f=$CLASS; fi
	total=$((total + 1))
	case $l in
	ran) ran=$((ran + 1)) ;;
	refused) refused=$((refused + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
	[ "$f" = ran ] && fio_ran=$((fio_ran + 1))
	[ "$f" = ran ] && [ "$l" = ran ] && both=$((both + 1))
	[ "$l" = ran ] && lmsg=
	printf '%-40s llmio %-8s fio %-7s %s\n' "$name" "$l" "$f" "$lmsg"
	[ -n "$TSV" ] && printf '%s\t%s\t%s\t%s\n' "$name" "$l" "$f" "$lmsg" >>"$TSV"
done
echo
echo "corpus: $WHAT, $total job files, shrunk to size=$SIZE runtime=${RUNTIME}s ($(date -u +%F))"
echo "llmio: ran $ran ($((100 * ran / (total ? total : 1))) %), refused by name $refused, failed $failed"
[ -n "$FIO" ] && echo "fio ($("$FIO" --version)): ran $fio_ran; of those llmio ran $both ($((100 * both / (fio_ran ? fio_ran : 1))) %)"
[ "$failed" -eq 0 ]
