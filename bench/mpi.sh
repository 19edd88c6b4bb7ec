#!/usr/bin/env bash
# mpi.sh: llmio under Open MPI on this machine (docs/mpi.md).
#
#   1. Start-up: wall time of `mpirun -np 4` running a trivial MPI program (MPI_Init +
#      MPI_Finalize, built here with mpicc) against `mpirun -np 4 llmio run` of a job that moves
#      one 4 KiB block on the null engine; the difference is what llmio adds to MPI's own launch.
#   2. Shared-file checkpoint scaling: 1, 2 and 4 ranks write one file together (each its own
#      region, O_DIRECT, fsync at the end), IOR's shared-file layout.  Printed per rank count:
#      llmio's aggregate GB/s (bytes over earliest start to latest end), the slowest rank's
#      GB/s, and the device's own view: bytes the disk wrote in the window over the same time.
#
#   bench/mpi.sh [--dir DIR] [--size SIZE] [--reps N] [--llmio BIN]
#     --dir    where the shared file goes (default ./mpi-bench-scratch; a disk, not tmpfs)
#     --size   bytes of the checkpoint, split over the ranks (default 512m)
#     --reps   repetitions of each measurement; the median is printed (default 3)
#     --llmio  the llmio binary (default build/llmio)
# Output: a Markdown table on stdout; the JSON of every run under $OUT (default ./mpi-bench-out).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=${OUT:-$ROOT/mpi-bench-out}
DIR=$ROOT/mpi-bench-scratch
SIZE=512m
REPS=3
LLMIO=$ROOT/build/llmio

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--dir) DIR=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--llmio) LLMIO=$2; shift 2 ;;
	-h | --help) usage 0 ;;
	*) usage ;;
	esac
done
command -v mpirun >/dev/null && command -v mpicc >/dev/null ||
	{ echo "mpi.sh: needs mpirun and mpicc (scripts/bootstrap.sh installs Open MPI)" >&2; exit 1; }
[ -x "$LLMIO" ] || { echo "mpi.sh: $LLMIO is not built (scripts/bootstrap.sh build)" >&2; exit 1; }
mkdir -p "$OUT" "$DIR" || exit 1
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --mca btl "self,vader"
	--mca btl_vader_single_copy_mechanism none)

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
now() { date +%s.%N; }

# 1. start-up overhead
cat >"$OUT/trivial.c" <<'EOF'
#include <mpi.h>
int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Finalize();
	return 0;
}
EOF
mpicc -O2 -o "$OUT/trivial" "$OUT/trivial.c" || exit 1
launch() { # launch CMD...: median wall seconds of REPS runs
	for _ in $(seq "$REPS"); do
		local t0 t1
		t0=$(now)
		"$@" >/dev/null 2>&1 || { echo "mpi.sh: $* failed" >&2; exit 1; }
		t1=$(now)
		echo "$t1 - $t0" | bc -l
	done | median
}
triv=$(launch "${MPIRUN[@]}" -np 4 "$OUT/trivial")
job=$(launch "${MPIRUN[@]}" -np 4 "$LLMIO" run --ioengine=null --filename="$DIR/null" \
	--size=16k --bs=4k --quiet)
alone=$(launch "$LLMIO" run --ioengine=null --filename="$DIR/null" --size=16k --bs=4k --quiet)
printf '## Start-up, -np 4 (median of %s)\n\n' "$REPS"
printf '| what | wall s |\n| --- | --- |\n'
printf '| mpirun -np 4 trivial MPI program | %.3f |\n' "$triv"
printf '| mpirun -np 4 llmio run (null engine, 4 blocks) | %.3f |\n' "$job"
printf '| llmio run alone (same job, no MPI) | %.3f |\n' "$alone"
printf '| llmio over MPI'"'"'s own launch | %.3f |\n\n' "$(echo "$job - $triv" | bc -l)"

# 2. shared-file checkpoint scaling
printf '## Shared-file checkpoint, %s in all, O_DIRECT, 1 MiB writes, fsync (median of %s)\n\n' \
	"$SIZE" "$REPS"
printf '| ranks | llmio aggregate GB/s | slowest rank GB/s | device GB/s (disk counters) | device bytes / llmio bytes | start skew ms |\n'
printf '| --- | --- | --- | --- | --- | --- |\n'
for n in 1 2 4; do
	for r in $(seq "$REPS"); do
		rm -f "$DIR/ckpt.dat"
		sync
		"${MPIRUN[@]}" -np "$n" "$LLMIO" run --filename="$DIR/ckpt.dat" --size="$SIZE" --bs=1m \
			--rw=write --direct=1 --end_fsync=1 --iodepth=1 --quiet \
			--json="$OUT/ckpt-np$n-$r.json" >/dev/null 2>"$OUT/ckpt-np$n-$r.err" ||
			{ echo "mpi.sh: -np $n failed: $(head -c 300 "$OUT/ckpt-np$n-$r.err")" >&2; exit 1; }
		python3 - "$OUT/ckpt-np$n-$r.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); j = d["jobs"][0]; m = d["mpi"]
s = j["job_runtime"] / 1000
per = [p["job"]["write"]["io_bytes"] / (p["job"]["job_runtime"] / 1000) / 1e9 for p in m["per_rank"]]
print("%.4f %.4f %.4f %.3f %.3f" % (j["write"]["io_bytes"] / s / 1e9, min(per),
      j["device"]["write_bytes"] / s / 1e9, j["device"]["write_bytes"] / j["write"]["io_bytes"],
      m["start_skew_s"] * 1e3))
EOF
	done >"$OUT/ckpt-np$n.txt"
	row=""
	for c in 1 2 3 4 5; do
		row="$row | $(awk -v c="$c" '{print $c}' "$OUT/ckpt-np$n.txt" | median)"
	done
	printf '| %s%s |\n' "$n" "$row"
done
rm -f "$DIR/ckpt.dat" "$DIR/null"
