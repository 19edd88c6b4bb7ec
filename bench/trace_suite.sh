#!/usr/bin/env bash
# The tracer on a small suite of real ML programs (Debian's python3-torch, CPU; nothing
# downloaded): its reports, and its overhead on each.  Each program is sized like the job it
# models, so that the fixed costs (`import torch`, the tracer's start in each process, the
# merge after the command) weigh what they weigh in such a job, and the per-call cost shows
# as what it is (ns per traced call, beside the percentage):
#   - loader: PyTorch's DataLoader, 2 worker processes started again each epoch, 20 epochs over
#     2,000 files of 4-64 KiB: 40,000 samples, each opened, read and closed
#     (bench/trace_programs/loader.py);
#   - train: torch.load of a model, 2 epochs over 96 sample files with 2 workers, torch.save
#     checkpoints fsynced and renamed (bench/trace_torch.py);
#   - shards: a 1 GiB model saved in 2 safetensors-format shards of 512 MiB, fsynced, and
#     loaded back tensor by tensor (bench/trace_programs/shards.py).
#
#   bench/trace_suite.sh [-o OUT] [--runs N] [--no-strace] [--programs "loader train shards"]
#                        [--together] [--timeout S] [LLMIO_BINARY]
#                                                      (OUT: bench-trace-suite, N: 7, S: 1800)
#
# For each program: N rounds of one untraced run, one traced run and one run under
# `strace -f -y` (the reference: what a tool that stops at every system call costs),
# interleaved so that drift and other load hit all three alike (--together: the untraced and
# the traced run of a round at the same time, each on its own copy of the program's files, so
# that both meet the same load on a machine others are using; the strace run after them); the
# median wall time and the
# median CPU time (user + system of the whole process tree) of each, the overheads as ratios of
# medians, and the tracer's cost per traced call (median CPU traced - untraced, over the calls
# in the trace).  The load average before and after each program's runs is printed with it:
# on a busy machine the wall figures are mostly the other work's noise, the CPU figures much
# less.  Then one more traced run's `llmio trace report` as OUT/NAME.txt and OUT/NAME/ (its
# report.html and charts).  Prints markdown tables.  Not part of `make test` (docs/tracing.md,
# "Accuracy and overhead"; the target is at most 5 % on each program).
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-trace-suite
runs=7
strace=1
programs="loader train shards"
limit=1800
together=0
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--no-strace) strace=0; shift ;;
	--programs) programs=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--together) together=1; shift ;;
	*) break ;;
	esac
done
LLMIO=$(realpath "${1:-build/llmio}")
PY=/usr/bin/python3
[ -x "$LLMIO" ] || { echo "build llmio first (make build): $LLMIO is missing" >&2; exit 2; }
"$PY" -c 'import torch' 2>/dev/null ||
	{ echo "no torch for $PY: scripts/bootstrap.sh installs python3-torch" >&2; exit 2; }
[ $strace = 0 ] || command -v strace >/dev/null ||
	{ echo "no strace: apt-get install strace, or --no-strace" >&2; exit 2; }
mkdir -p "$out"
W=$(mktemp -d "${TMPDIR:-/tmp}/llmio-trace-suite.XXXXXX")
trap 'rm -rf "$W"' EXIT

# measure FILE ARGS...: append "wall_s cpu_s" of one run of ARGS (output discarded), cpu being
# user + system of every process it started and waited for; a run that fails, or that has not
# ended after --timeout seconds (a hang: its process group is killed), stops the suite with its
# exit status, the end of its stderr and the space left on the filesystem of the runs (a full
# filesystem fails or hangs the programs themselves: bench/results/2026-12-trace-overhead-edge.md)
measure() {
	local file=$1
	shift
	W=$W LIMIT=$limit "$PY" - "$@" >>"$file" 2>"$file.err" <<'PYEOF' || { echo "failed: $*" >&2; tail -5 "$file.err" >&2; exit 1; }
import os, resource, shutil, signal, subprocess, sys, time
limit = float(os.environ["LIMIT"])
free = lambda: "%.1f GiB free on the filesystem of the runs" % (shutil.disk_usage(os.environ["W"]).free / 2**30)
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, start_new_session=True)
try:
    p.wait(timeout=limit)
except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    sys.exit("no end after %.0f s, killed (a hang); %s" % (limit, free()))
t1 = time.perf_counter()
if p.returncode:
    sys.exit("exit status %d; %s" % (p.returncode, free()))
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f %.4f" % (t1 - t0, r.ru_utime + r.ru_stime))
PYEOF
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { awk -v c="$2" '{print $c}' "$1" | median; }
pct() { echo "100 * ($1 - $2) / $2" | bc -l; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

modes="untraced traced"
[ $strace = 0 ] || modes="$modes strace"
echo "$(nproc) CPUs, $(uname -r), $("$PY" -c 'import torch; print("torch", torch.__version__)'); medians of $runs interleaved rounds"
echo
echo "| program | run | wall | wall overhead | CPU | CPU overhead | calls traced | tracer CPU per call | load average before / after |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for name in $programs; do
	case $name in
	loader) script=bench/trace_programs/loader.py ;;
	train) script=bench/trace_torch.py ;;
	shards) script=bench/trace_programs/shards.py ;;
	esac
	dir=$W/$name
	mkdir -p "$dir"
	prog=(env OMP_NUM_THREADS=1 "$PY" "$PWD/$script" "$dir")
	"${prog[@]}" setup >/dev/null
	prog2=("${prog[@]}") # the traced run's (--together: a copy of the files of its own)
	if [ $together = 1 ]; then
		mkdir -p "$dir.2"
		prog2=(env OMP_NUM_THREADS=1 "$PY" "$PWD/$script" "$dir.2")
		"${prog2[@]}" setup >/dev/null
	fi
	for m in $modes; do : >"$W/$m"; done
	before=$(load)
	for _ in $(seq "$runs"); do
		if [ $together = 1 ]; then
			measure "$W/untraced" "${prog[@]}" run &
			u=$!
			measure "$W/traced" "$LLMIO" trace -q -o "$W/$name.trace" -- "${prog2[@]}" run &
			wait "$u" || exit 1
			wait $! || exit 1
		else
			measure "$W/untraced" "${prog[@]}" run
			measure "$W/traced" "$LLMIO" trace -q -o "$W/$name.trace" -- "${prog2[@]}" run
		fi
		rm -f "$W/$name.trace"
		if [ $strace = 1 ]; then
			measure "$W/strace" strace -f -y -qq -o "$W/$name.strace" "${prog[@]}" run
			rm -f "$W/$name.strace"
		fi
	done
	after=$(load)
	"$LLMIO" trace -q -o "$W/$name.trace" -- "${prog[@]}" run >/dev/null
	"$LLMIO" trace report "$W/$name.trace" -o "$out/$name" >"$out/$name.txt"
	calls=$("$LLMIO" trace report "$W/$name.trace" --json | "$PY" -c \
		'import json, sys; print(json.load(sys.stdin)["totals"]["calls"])')
	pw=$(col "$W/untraced" 1)
	pc=$(col "$W/untraced" 2)
	for m in $modes; do
		w=$(col "$W/$m" 1)
		c=$(col "$W/$m" 2)
		per="" n=""
		if [ "$m" = traced ]; then
			n=$calls
			per=$(printf "%.0f ns" "$(echo "1000000000 * ($c - $pc) / $calls" | bc -l)")
		fi
		printf '| %s | %s | %.2f s | %+.1f %% | %.2f s | %+.1f %% | %s | %s | %s |\n' "$name" "$m" \
			"$w" "$(pct "$w" "$pw")" "$c" "$(pct "$c" "$pc")" "$n" "$per" \
			"$([ "$m" = untraced ] && echo "$before / $after")"
	done
done

# the loader's per-file pattern without the interpreter (bench/trace_programs/files.c): CPU per
# file, untraced and traced, medians of 9 interleaved runs of 20,000 files of 16 KiB (cached)
cc -O2 -o "$W/files" bench/trace_programs/files.c
mkdir -p "$W/files.d"
for i in $(seq 0 199); do head -c 16384 /dev/urandom >"$W/files.d/f$i"; done
: >"$W/fu" && : >"$W/ft"
for _ in $(seq 9); do
	"$W/files" "$W/files.d" 200 20000 >>"$W/fu"
	"$LLMIO" trace -q -o "$W/files.trace" -- "$W/files" "$W/files.d" 200 20000 >>"$W/ft"
done
fu=$(median <"$W/fu")
ft=$(median <"$W/ft")
echo
echo "open, fstat, read whole, close of a 16 KiB file (4 traced calls), CPU per file, medians of 9: untraced $fu ns, traced $ft ns: +$((ft - fu)) ns a file, $(((ft - fu) / 4)) ns a traced call (load average $(load))"
echo
echo "reports: $out/NAME.txt and $out/NAME/report.html"
