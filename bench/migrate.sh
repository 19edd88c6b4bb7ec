#!/usr/bin/env bash
# migrate.sh: the g10 migration plan simulated and executed on this machine's disk, side by
# side (issue 18: "simulated stall within 15 % of the measured stall").
#
# Two steps, three budgets each, policy g10 with no host tier (every transfer through the SSD
# tier, i.e. through the tensor store on the engine asked for):
#   BERT   G10's graph (tests/data/g10/BERT_Base.txt, batch 256, G10's 7.28547 s of kernels)
#          at 40g, 30g, 20g;
#   Llama  llama-3.2-1b, micro-batch 8, sequence 2048 (the catalog's step) at 80g, 60g, 40g.
# The budgets are the unscaled ones; bytes are scaled by --scale and kernel times by
# --time_scale so that the step fits this machine (the plan, its simulation and its execution
# all see the same scaled step).  The SSD tier's bandwidth and latencies are measured by llmio
# on the store before each run, with the step's tensor sizes (its note says so), and the
# simulation beside the run models the store's one SSD queue and the emulated kernels' late
# wake-ups.  Each run is one JSON under $OUT; the table (summary.md) has per run the simulated
# stall, the stall simulated again at the pace the run's kernels actually ran
# (sim_stall_at_run_pace_s), the measured stall and their ratios, and how many runs are
# within 15 %; the chart (stall.png, drawn by gnuplot when it is installed; its script is
# stall.gp) shows the simulated and measured stall side by side.  Then, simulated only with
# G10's tiers, every policy side by side on BERT-256, ViT-1280 and Llama-3.2-1B at three
# budgets each (tables.md: the tables of docs/migration.md).
#
#   bench/migrate.sh [--dir DIR] [--engine E] [--scale F] [--time_scale F] [--llmio BIN]
#                    [--tables]
#     --tables      the simulated tables alone (tables.md; no disk, seconds)
#     --dir         directory on the disk to measure (default ./migrate-scratch)
#     --engine      llmio engine for the store (default io_uring)
#     --scale       bytes factor (default 0.002: BERT's 72 GB peak becomes 144 MB)
#     --time_scale  kernel time factor (default 0.05)
#     --llmio       the llmio binary (default build/llmio)
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=${OUT:-$ROOT/migrate-out}
DIR=$ROOT/migrate-scratch
ENGINE=io_uring
SCALE=0.002
TSCALE=0.05
LLMIO=$ROOT/build/llmio
TABLES_ONLY=0

usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--dir) DIR=$2; shift 2 ;;
	--engine) ENGINE=$2; shift 2 ;;
	--scale) SCALE=$2; shift 2 ;;
	--time_scale) TSCALE=$2; shift 2 ;;
	--llmio) LLMIO=$2; shift 2 ;;
	--tables) TABLES_ONLY=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "migrate.sh: unknown option $1" >&2; usage ;;
	esac
done
[ -x "$LLMIO" ] || { echo "migrate.sh: $LLMIO is not built (scripts/bootstrap.sh build)" >&2; exit 1; }
mkdir -p "$OUT" "$DIR" || exit 1

BERT=(--lifetimes "$ROOT/tests/data/g10/BERT_Base.txt" --batch 256 --compute_s 7.28547)
LLAMA=(--model llama-3.2-1b --micro_batch 8 --seq 2048)
COMMON=(--policy g10 --host_bytes 0 --engine "$ENGINE" --directory "$DIR" --scale "$SCALE"
	--time_scale "$TSCALE" --quiet)

fails=0
one() { # one NAME BUDGET ARGS...
	local name=$1 budget=$2; shift 2
	echo "== $name at $budget"
	"$LLMIO" run --workload migrate "$@" --budget "$budget" "${COMMON[@]}" \
		--json "$OUT/$name-$budget.json" || fails=$((fails + 1))
}
if [ "$TABLES_ONLY" = 0 ]; then
for b in 40g 30g 20g; do one bert "$b" "${BERT[@]}"; done
for b in 80g 60g 40g; do one llama "$b" "${LLAMA[@]}"; done

python3 - "$OUT" "$ENGINE" "$SCALE" "$TSCALE" >"$OUT/summary.md" <<'PY'
import glob, json, os, sys
out, engine, scale, ts = sys.argv[1:]
print(f"engine {engine}, --scale {scale}, --time_scale {ts}, policy g10, no host tier\n")
print("| step | budget | SSD tier (measured) | sim step s | run step s | sim stall s | "
      "sim stall at run pace s | run stall s | run/sim stall | run/sim at pace | "
      "stalled kernels | late wakeup s | SSD MB out |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
within = [0, 0, 0]  # runs, within 15 % of the simulation, of the simulation at run pace
for f in sorted(glob.glob(os.path.join(out, "[bl]*.json"))):
    d = json.load(open(f))
    ph = {p["name"]: p for p in d["runs"][0]["phases"]}
    s, r = ph.get("simulate-g10"), ph.get("run-g10")
    name = os.path.basename(f)[:-5]
    if not s or not r or "stall_s" not in r["metrics"]:
        print(f"| {name} | | {(s or r or {}).get('note', 'no result')} |")
        continue
    sm, rm = s["metrics"], r["metrics"]
    tiers = r["note"].split("SSD tier on ")[-1]
    pace = rm.get("sim_stall_at_run_pace_s", float("nan"))
    ratio = rm["stall_s"] / sm["stall_s"] if sm["stall_s"] > 0 else float("nan")
    rpace = rm["stall_s"] / pace if pace > 0 else float("nan")
    within[0] += 1
    within[1] += abs(ratio - 1) <= 0.15
    within[2] += abs(rpace - 1) <= 0.15
    print(f"| {name.split('-')[0]} | {name.split('-')[1]} | {tiers} | {sm['step_s']:.4f} | "
          f"{rm['step_s']:.4f} | {sm['stall_s']:.4f} | {pace:.4f} | {rm['stall_s']:.4f} | "
          f"{ratio:.2f} | {rpace:.2f} | {int(rm['stalled_kernels'])} | "
          f"{rm['late_wakeup_s']:.4f} | {rm['ssd_out_bytes'] / 1e6:.1f} |")
print(f"\nMeasured stall within 15 % of the simulated one: {within[1]} of {within[0]} runs; "
      f"of the simulation at the run's pace: {within[2]} of {within[0]}.")
try:
    print(f"Load average when the runs ended: {open('/proc/loadavg').read().split()[0:3]}")
except OSError:
    pass
PY
cat "$OUT/summary.md"
fi

# the policies side by side, simulated with G10's tiers (the tables of docs/migration.md)
tables() { # tables NAME BUDGETS -- ARGS...
	local name=$1 budgets=$2; shift 3
	echo "### $name, ratio to ideal (stall s; GB moved, host + SSD, both ways)"
	echo
	echo "| budget | lru | prefetch-lru | ssdtrain | flashneuron | g10 | g10, no host | g10-lite |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
	for b in $budgets; do
		"$LLMIO" run --workload migrate "$@" --budget "$b" --simulate --quiet \
			--json "$OUT/sim-$name-$b.json" >/dev/null || fails=$((fails + 1))
		# G10-GDS: g10 with the SSD tier alone
		"$LLMIO" run --workload migrate "$@" --budget "$b" --simulate --quiet --policy g10 \
			--host_bytes 0 --json "$OUT/sim-$name-$b-gds.json" >/dev/null ||
			fails=$((fails + 1))
		python3 - "$OUT/sim-$name-$b.json" "$b" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ph = {p["name"]: p for p in d["runs"][0]["phases"]}
gds = json.load(open(sys.argv[1][:-5] + "-gds.json"))["runs"][0]["phases"][0]
ph["simulate-g10-gds"] = gds
row = [sys.argv[2]]
for q in ["lru", "prefetch-lru", "ssdtrain", "flashneuron", "g10", "g10-gds", "g10-lite"]:
    m = ph[f"simulate-{q}"]["metrics"]
    if "ratio_to_ideal" not in m:
        row.append("cannot run")
        continue
    gb = sum(m[f"{t}_{d}_bytes"] for t in ["host", "ssd"] for d in ["out", "in"]) / 1e9
    row.append(f"{m['ratio_to_ideal']:.3f} ({m['stall_s']:.2f}; {gb:.1f})")
print("| " + " | ".join(row) + " |")
PY
	done
	echo
}
{
	tables BERT-256 "40g 30g 20g" -- "${BERT[@]}"
	tables ViT-1280 "40g 30g 20g" -- --lifetimes "$ROOT/tests/data/g10/VIT.txt" --batch 1280 \
		--compute_s 3.71595
	tables Llama-3.2-1B "80g 60g 40g" -- "${LLAMA[@]}"
	# against G10's published figure (example_results/overall_performance/all.base.txt of
	# platformxlab/G10: execution time per policy; ratio = ideal / time; FlashNeuron on ViT:
	# "inf", it cannot run)
	python3 - "$OUT" <<'PY'
import itertools, json, os, sys
pub = {"BERT-256": {"lru": 8742558777 / 23580084389, "flashneuron": 8742558777 / 12258600000,
                    "prefetch-lru": 8742558777 / 10992552904,
                    "g10-gds": 8742558777 / 10851936000, "g10": 8742558777 / 8773229325},
       "ViT-1280": {"lru": 4459141336 / 29519610761, "flashneuron": 0.0,
                    "prefetch-lru": 4459141336 / 9069040214,
                    "g10-gds": 4459141336 / 7891464000, "g10": 4459141336 / 6647685439}}
print("### Against G10's figure at 40g (ratio to ideal; G10's DeepUM+ = prefetch-lru, "
      "G10-GDS = g10 with no host)\n")
print("| step | " + " | ".join(pub["BERT-256"]) + " | pairs ranked alike |")
print("| --- |" + " --- |" * (len(pub["BERT-256"]) + 1))
for step, p in pub.items():
    ph = {q["name"]: q["metrics"] for q in
          json.load(open(os.path.join(sys.argv[1], f"sim-{step}-40g.json")))["runs"][0]["phases"]}
    gds = json.load(open(os.path.join(sys.argv[1], f"sim-{step}-40g-gds.json")))
    ph["simulate-g10-gds"] = gds["runs"][0]["phases"][0]["metrics"]
    ours = {q: ph[f"simulate-{q}"].get("ratio_to_ideal", 0.0) for q in p}
    pairs = list(itertools.combinations(p, 2))
    alike = [a + "/" + b for a, b in pairs if (ours[a] > ours[b]) == (p[a] > p[b])]
    differ = [a + " vs " + b for a, b in pairs if (ours[a] > ours[b]) != (p[a] > p[b])]
    print(f"| {step} | " + " | ".join(f"{ours[q]:.3f} ({p[q]:.3f})" for q in p) +
          f" | {len(alike)} of {len(pairs)}" + (f"; not: {', '.join(differ)}" if differ else "") + " |")
print("\n(ours (G10's); flashneuron 0.000 in G10's column: it cannot run there)\n")
PY
} >"$OUT/tables.md"
cat "$OUT/tables.md"
[ "$TABLES_ONLY" = 1 ] && exit $((fails > 0))

# the chart: simulated against measured stall per run, when gnuplot is here
python3 - "$OUT" >"$OUT/stall.dat" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    if os.path.basename(f).startswith("sim-"):
        continue
    ph = {p["name"]: p["metrics"] for p in json.load(open(f))["runs"][0]["phases"]}
    if "stall_s" in ph.get("simulate-g10", {}) and "stall_s" in ph.get("run-g10", {}):
        print(os.path.basename(f)[:-5], ph["simulate-g10"]["stall_s"], ph["run-g10"]["stall_s"])
PY
cat >"$OUT/stall.gp" <<GP
set terminal pngcairo size 900,500 noenhanced
set output '$OUT/stall.png'
set title 'g10 plan, SSD tier only: simulated and measured stall ($ENGINE)'
set ylabel 'stall per step, s'
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set key top right
plot '$OUT/stall.dat' using 2:xtic(1) title 'simulated', '' using 3 title 'measured'
GP
if command -v gnuplot >/dev/null; then
	gnuplot "$OUT/stall.gp" && echo "chart: $OUT/stall.png"
else
	echo "no gnuplot here: the chart's script is $OUT/stall.gp"
fi
exit $((fails > 0))
