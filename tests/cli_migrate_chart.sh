#!/bin/bash
# llmio run --workload migrate --chart DIR: the policies side by side as a gnuplot chart (script,
# data file, PNG and SVG) in a new directory; the data file carries the record's own numbers,
# simulated and measured; an existing path is never written into; without gnuplot the script
# and the data are still written and the message says how to draw them.
. "$(dirname "$0")/lib.sh"

# BIG (1 MB) idle from kernel 0 to 9, X (1 MB) in kernels 4-5, 1.5 MB of room; at 1 GB
# (big.lt) ssdtrain's plan cannot fit (cli_migrate.sh), so its row is all '?'
{
	echo "llmio-lifetimes 1"
	for k in 0 1 2 3 4 5 6 7 8 9; do echo "kernel k$k 100000"; done
	echo "tensor BIG 1000000 activation 0 9"
	echo "tensor X 1000000 workspace 4 5"
} >"$T/step.lt"
sed 's/1000000/1000000000/' "$T/step.lt" >"$T/big.lt"

# data_matches DESC DIR JSON MODES: DIR/migrate.dat has one row per policy, in the record's
# order, whose columns are the record's compute_s, stall_s, overlap_s and ratio_to_ideal for
# simulate-POLICY and run-POLICY ('?' exactly where the record has no such phase or metric)
data_matches() {
	local desc=$1 out
	if out=$(python3 - "$2/migrate.dat" "$3" "$4" 2>&1 <<'PY'
import json, math, sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
d = json.load(open(sys.argv[2]))
phases = {p['name']: p.get('metrics', {}) for p in d['runs'][0]['phases']}
pols = []
for name in phases:
    pol = name.split('-', 1)[1]
    if pol not in pols:
        pols.append(pol)
assert [r[0] for r in rows] == pols, ([r[0] for r in rows], pols)
modes = sys.argv[3].split(',')
seen = set()
for r in rows:
    assert len(r) == 9, r
    for i, mode in enumerate(['simulate', 'run']):
        m = phases.get(mode + '-' + r[0], {})
        for k, key in enumerate(['compute_s', 'stall_s', 'overlap_s', 'ratio_to_ideal']):
            cell = r[1 + 4 * i + k]
            if key not in m:
                assert cell == '?', (r, key)
                continue
            seen.add(mode)
            v = float(cell)
            assert math.isclose(v, m[key], rel_tol=1e-8, abs_tol=1e-12), (r, key, m[key])
assert sorted(seen) == sorted(modes), (seen, modes)
PY
	); then pass "$desc"; else fail "$desc: $out"; fi
}

expect_rc 0 "migrate --help names --chart" run --workload migrate --help
expect_out "with what it writes" "--chart DIR" "DIR must be new"

expect_rc 0 "simulated policies drawn into a new directory" run --workload migrate \
	--lifetimes "$T/big.lt" --budget 1500000000 --simulate --policy all --quiet \
	--json "$T/sim.json" --chart "$T/sim"
for f in migrate.gp migrate.dat; do
	check "$f is written" test -s "$T/sim/$f"
done
data_matches "one row per policy, the JSON record's numbers, '?' for ssdtrain's missing plan" \
	"$T/sim" "$T/sim.json" simulate
check "ssdtrain, which cannot fit, keeps its place with no figures" \
	grep -qxF "ssdtrain ? ? ? ? ? ? ? ?" "$T/sim/migrate.dat"
check "the script reads the data file and draws PNG and SVG" \
	grep -qF 'migrate.dat' "$T/sim/migrate.gp"

if "$LLMIO" engines --brief 2>/dev/null | grep -Eq "^psync +available"; then
	mkdir -p "$T/d"
	expect_rc 0 "executed and simulated side by side" run --workload migrate \
		--lifetimes "$T/step.lt" --budget 1500000 --engine psync --directory "$T/d" \
		--time_scale 0.1 --ssd_gbps 1 --ssd_read_lat 100us --ssd_write_lat 100us --quiet \
		--json "$T/run.json" --chart "$T/run"
	data_matches "simulated and measured columns hold the record's numbers" "$T/run" \
		"$T/run.json" simulate,run
else
	note "psync is not available here: the measured columns are not checked"
fi

if command -v gnuplot >/dev/null 2>&1; then
	for f in png svg; do
		check "migrate.$f is drawn" test -s "$T/sim/migrate.$f"
	done
	check "migrate.png is a PNG" bash -c "head -c 8 '$T/sim/migrate.png' | od -An -tx1 | tr -d ' \n' | grep -qx 89504e470d0a1a0a"
	check "migrate.svg is an SVG" grep -q '<svg' "$T/sim/migrate.svg"
	check "no gnuplot.log is left after a drawing that worked" test ! -e "$T/sim/gnuplot.log"
else
	note "gnuplot is not installed: the drawings are not checked"
fi

# an existing path is never written into: a directory (even empty) and a file
mkdir "$T/old"
echo keep >"$T/old/migrate.dat"
expect_rc 2 "an existing --chart directory is refused" run --workload migrate \
	--lifetimes "$T/step.lt" --budget 1500000 --simulate --chart "$T/old"
expect_err "says it is never replaced and what to do" "exists" "choose a new path"
check "and what was there is untouched" bash -c "[ \"\$(ls '$T/old')\" = migrate.dat ] && grep -qx keep '$T/old/migrate.dat'"
echo mine >"$T/file"
expect_rc 2 "an existing file is refused too" run --workload migrate \
	--lifetimes "$T/step.lt" --budget 1500000 --simulate --chart "$T/file"
check "and keeps its content" grep -qx mine "$T/file"
expect_rc 2 "a directory that cannot be created is refused before the run" run \
	--workload migrate --lifetimes "$T/step.lt" --budget 1500000 --simulate \
	--chart "$T/missing/parent"
expect_rc 2 "--chart is for migrate" run --workload ckpt --model gpt2 --directory "$T/d" \
	--chart "$T/ck"
expect_err "and says where other charts come from" "llmio report"

# without gnuplot: the figures are written and the note says how to draw them
LLMIO_GNUPLOT=/nonexistent/gnuplot expect_rc 0 "without gnuplot the run still succeeds" \
	run --workload migrate --lifetimes "$T/step.lt" --budget 1500000 --simulate --quiet \
	--json "$T/nog.json" --chart "$T/nog"
expect_err "the note says how to draw the chart" "gnuplot is not installed" \
	"cd $T/nog && gnuplot migrate.gp"
check "the script is written" test -s "$T/nog/migrate.gp"
data_matches "and the data file" "$T/nog" "$T/nog.json" simulate
check "nothing was drawn" test ! -e "$T/nog/migrate.png"

# a gnuplot that fails: an error naming its log, which is kept
LLMIO_GNUPLOT=/bin/false expect_rc 1 "a failing gnuplot is an error" run --workload migrate \
	--lifetimes "$T/step.lt" --budget 1500000 --simulate --quiet --chart "$T/bad"
expect_err "naming the directory and its log" "cannot draw the chart in $T/bad" "gnuplot.log" \
	"gnuplot failed"
check "the log is kept for the user" test -e "$T/bad/gnuplot.log"

finish
