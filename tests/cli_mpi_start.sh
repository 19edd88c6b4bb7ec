#!/usr/bin/env bash
# llmio's MPI start, many times over (docs/mpi.md, "Starting"): the ranks of a job start
# together, so whatever they race for (the work directory, the shared file that one of them
# creates and fills) shows up in a few runs out of twenty.  Each layout runs 20 times at -np 2
# and at -np 4 in a fresh directory, reads and writes alternating, each run small; every run
# must exit 0 and move exactly its bytes.  Once, the ranks raced to create the shared file and
# one of them failed with "creating DIR/llmio-work/mpi.dat failed: File exists".
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/mpi_lib.sh
. "$(dirname "$0")/mpi_lib.sh"

RUNS=20
for np in 2 4; do
	for layout in shared-file file-per-process; do
		bad=0
		for i in $(seq "$RUNS"); do
			d=$T/$np-$layout-$i
			mkdir "$d"
			rw=$([ $((i % 2)) -eq 0 ] && echo write || echo read)
			# quiet: 80 runs would flood the log; a failing run shows its command below
			_run "${MPIRUN[@]}" -np "$np" "$LLMIO" run --ioengine psync --rw "$rw" --bs 64k \
				--size 1m --io_size 256k --directory "$d" --mpi_layout "$layout" \
				--json="$d.json" --quiet
			if [ "$RC" -ne 0 ]; then
				bad=$((bad + 1))
				[ "$bad" -eq 1 ] && { _show "mpirun -np $np llmio run --rw $rw" \
					"--directory $d --mpi_layout $layout (exit $RC)"; head -n 3 "$T/stderr"; }
				rm -f "$d.json"
			fi
			rm -rf "$d"
		done
		check "-np $np $layout: $RUNS starts, $bad failed" [ "$bad" -eq 0 ]
	done
done

# every record that came back: the merged bytes are each rank's 256 KiB, the layout the one asked
python3 - "$T" "$RUNS" <<'EOF' && pass "every run moved exactly its bytes, in its layout" || fail "bytes or layout of a run"
import glob, json, os, sys
bad = []
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    name = os.path.basename(p)[:-5]
    np, layout, i = name.split("-", 1)[0], name.split("-", 1)[1].rsplit("-", 1)[0], int(name.rsplit("-", 1)[1])
    d = json.load(open(p))
    op = "write" if i % 2 == 0 else "read"
    per = [r["job"][op]["io_bytes"] for r in d["mpi"]["per_rank"]]
    if per != [262144] * int(np) or d["jobs"][0][op]["io_bytes"] != 262144 * int(np) \
            or d["mpi"]["file_layout"] != layout:
        bad.append((name, per, d["mpi"]["file_layout"]))
print(bad[:5])
sys.exit(1 if bad else 0)
EOF

finish
