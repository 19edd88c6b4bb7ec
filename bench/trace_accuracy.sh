#!/usr/bin/env bash
# Accuracy and overhead of `llmio trace` on a real PyTorch program (bench/trace_torch.py:
# torch.load, DataLoader with 2 worker processes over 96 sample files, torch.save checkpoints
# with fsync + rename), against `strace -f -y` of the same program.
#
#   bench/trace_accuracy.sh [LLMIO_BINARY] [RUNS]      (default build/llmio, 5 runs)
#
# Prints markdown tables: per-file bytes (tracer vs strace), wall time untraced / traced /
# strace -f (median of RUNS), and a syscall-heavy micro-benchmark (pread of 4 KiB from a
# cached file) in calls/s untraced vs traced.  Not part of `make test`; takes a few minutes.
# Installs python3-torch and strace with apt when missing (root or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
LLMIO=$(realpath "${1:-build/llmio}")
RUNS=${2:-5}
PY=/usr/bin/python3
[ -x "$LLMIO" ] || { echo "build llmio first (make build): $LLMIO is missing" >&2; exit 2; }

need=()
"$PY" -c 'import torch' 2>/dev/null || need+=(python3-torch)
command -v strace >/dev/null || need+=(strace)
command -v cc >/dev/null || need+=(gcc)
command -v bc >/dev/null || need+=(bc)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "installing ${need[*]} (once; python3-torch is large)" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/llmio-trace-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
PROG=(env OMP_NUM_THREADS=1 "$PY" "$PWD/bench/trace_torch.py" "$W/work")
mkdir -p "$W/work"
"${PROG[@]}" setup

echo "## accuracy: bytes per file, llmio trace vs strace -f -y"
echo
"$LLMIO" trace -q -o "$W/run.trace" --include "$W/work" -- "${PROG[@]}" run >/dev/null
"$LLMIO" trace report "$W/run.trace" --json >"$W/report.json"
strace -f -y -qq -o "$W/strace.log" "${PROG[@]}" run >/dev/null
"$PY" - "$W/report.json" "$W/strace.log" "$W/work" <<'EOF'
import json, re, sys
from collections import defaultdict
report, log, root = sys.argv[1:4]
tr = json.load(open(report))["files"]
# strace: every read/write family call with a -y path under root, completed or resumed
calls = {"read", "pread64", "readv", "preadv", "preadv2", "write", "pwrite64", "writev",
         "pwritev", "pwritev2"}
st = defaultdict(lambda: [0, 0])
pending = {}
head = re.compile(r"^(\d+)\s+(.*)$")
for line in open(log, errors="replace"):
    m = head.match(line.rstrip("\n"))
    if not m:
        continue
    pid, text = m.groups()
    if text.endswith("<unfinished ...>"):
        pending[pid] = text[: -len(" <unfinished ...>")]
        continue
    r = re.match(r"^<\.\.\. (\w+) resumed>(.*)$", text)
    if r:
        text = pending.pop(pid, "") + r.group(2)
    c = re.match(r"^(\w+)\((\d+)<([^>]*)>,.*\) += (-?\d+)", text)
    if not c or c.group(1) not in calls or not c.group(3).startswith(root):
        continue
    n = int(c.group(4))
    if n > 0:
        st[c.group(3)][0 if "read" in c.group(1) else 1] += n
paths = sorted(set(st) | set(p for p in tr if p.startswith(root)))
ok = True
rows = []
tot = [0, 0, 0, 0]
for p in paths:
    t = tr.get(p, {"bytes_read": 0, "bytes_written": 0})
    s = st.get(p, [0, 0])
    tot = [tot[0] + t["bytes_read"], tot[1] + s[0], tot[2] + t["bytes_written"], tot[3] + s[1]]
    if t["bytes_written"] != s[1] or abs(t["bytes_read"] - s[0]) > 0.01 * max(s[0], 1):
        ok = False
    rows.append((p[len(root) + 1:], t["bytes_read"], s[0], t["bytes_written"], s[1]))
print("| file | read (llmio) | read (strace) | written (llmio) | written (strace) |")
print("| --- | ---: | ---: | ---: | ---: |")
shown = [r for r in rows if not r[0].startswith("data/")]
data = [r for r in rows if r[0].startswith("data/")]
for r in shown:
    print("| %s | %d | %d | %d | %d |" % r)
if data:
    print("| data/ (%d sample files) | %d | %d | %d | %d |" % (
        len(data), sum(r[1] for r in data), sum(r[2] for r in data),
        sum(r[3] for r in data), sum(r[4] for r in data)))
print("| **all %d files** | %d | %d | %d | %d |" % (len(rows), *tot))
print()
bad = [r for r in rows if r[3] != r[4] or abs(r[1] - r[2]) > 0.01 * max(r[2], 1)]
print("per-file check (written equal, read within 1 %%): %s" %
      ("PASS" if ok else "FAIL: " + ", ".join(r[0] for r in bad)))
print()
EOF

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# one run of MODE: "wall_s cpu_s" (cpu: user + system of the whole process tree)
measure() {
	local mode=$1
	case $mode in
	untraced) set -- "${PROG[@]}" run ;;
	traced) set -- "$LLMIO" trace -q -o "$W/o.trace" --include "$W/work" -- "${PROG[@]}" run ;;
	strace) set -- strace -f -y -qq -o "$W/o.log" "${PROG[@]}" run ;;
	esac
	/usr/bin/time -f "%e %U %S" -o "$W/time" "$@" >/dev/null 2>&1
	awk '{printf "%s %.3f\n", $1, $2 + $3}' "$W/time"
}
# interleaved (untraced, traced, strace, untraced, ...) so that load from other processes on
# the machine falls on all three alike
for ((i = 0; i < RUNS; i++)); do
	for mode in untraced traced strace; do
		measure $mode >>"$W/$mode.times"
	done
done
declare -A T C
for mode in untraced traced strace; do
	T[$mode]=$(awk '{print $1}' "$W/$mode.times" | median)
	C[$mode]=$(awk '{print $2}' "$W/$mode.times" | median)
done
echo "## overhead: the PyTorch program, median of $RUNS interleaved runs"
echo
echo "| run | wall (s) | wall overhead | CPU user+sys (s) | CPU overhead |"
echo "| --- | ---: | ---: | ---: | ---: |"
for mode in untraced traced strace; do
	printf "| %s | %.2f | %+.1f %% | %.2f | %+.1f %% |\n" "$mode" "${T[$mode]}" \
		"$(echo "(${T[$mode]} / ${T[untraced]} - 1) * 100" | bc -l)" "${C[$mode]}" \
		"$(echo "(${C[$mode]} / ${C[untraced]} - 1) * 100" | bc -l)"
done
echo
echo "traced calls in one run: $("$LLMIO" trace report "$W/o.trace" --json | "$PY" -c \
	'import json,sys; print(json.load(sys.stdin)["totals"]["calls"])') (in scope);" \
	"$("$LLMIO" trace -q --all -o "$W/all.trace" -- "${PROG[@]}" run >/dev/null &&
		"$LLMIO" trace report "$W/all.trace" --json | "$PY" -c \
		'import json,sys; print(json.load(sys.stdin)["totals"]["calls"])') with --all"
echo

# micro-benchmark: N preads of 4 KiB from a cached file, timed inside the program
cat >"$W/micro.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	static char buf[4096];
	long n = atol(argv[2]);
	int fd = open(argv[1], O_RDONLY);
	struct timespec a, b;

	if (fd < 0 || pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		if (pread(fd, buf, sizeof(buf), (i % 256) * 4096) != sizeof(buf))
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.0f\n", n / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9));
	return 0;
}
EOF
cc -O2 -o "$W/micro" "$W/micro.c"
head -c $((256 * 4096)) /dev/urandom >"$W/work/micro.dat"
N=1000000
declare -A M
for mode in untraced traced strace; do
	for ((i = 0; i < RUNS; i++)); do
		case $mode in
		untraced) "$W/micro" "$W/work/micro.dat" $N ;;
		traced) "$LLMIO" trace -q -o "$W/m.trace" -- "$W/micro" "$W/work/micro.dat" $N ;;
		strace) strace -f -qq -o /dev/null "$W/micro" "$W/work/micro.dat" $((N / 10)) ;;
		esac
	done >"$W/m.$mode"
	M[$mode]=$(median <"$W/m.$mode")
done
echo "## micro-benchmark: pread 4 KiB from a cached file ($N calls; strace: $((N / 10)))"
echo
echo "| run | calls/s | ns per call | vs untraced |"
echo "| --- | ---: | ---: | ---: |"
for mode in untraced traced strace; do
	printf "| %s | %.0f | %.0f | %.2fx |\n" "$mode" "${M[$mode]}" \
		"$(echo "1000000000 / ${M[$mode]}" | bc -l)" "$(echo "${M[$mode]} / ${M[untraced]}" | bc -l)"
done
echo
echo "host: $(nproc) CPUs, $(uname -r), $("$PY" -c 'import torch; print("torch", torch.__version__)')"
