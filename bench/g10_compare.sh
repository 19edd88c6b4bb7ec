#!/usr/bin/env bash
# g10_compare.sh: llmio's migration planner beside G10's own simulator (issue 36), on G10's
# graphs, at the same budgets, bandwidths and latencies; plan by plan: bytes moved per tier and
# direction, stall, step time; every difference over 10 % flagged.
#
# llmio's half: each graph (BERT-Base at batch 256, ViT at batch 1280, the kernel times scaled
# to G10's measured sums) simulated by every policy at each budget (G10's tiers: the defaults).
# G10's half, when --g10-src names a checkout of platformxlab/G10 and make and g++ are installed
# (flex and bison too, for G10's own Makefile; run as root on Debian the script installs them
# with apt-get when they are missing): its simulator is built from that source in a scratch
# folder (nothing of it is kept), a config is written per run as its src/resources/genconfigs.py writes them, and its
# printed statistics of its last (steady) iteration are read back
# (pcie_stat.iterN.{incoming,outgoing}_pg_{cpu,ssd}: 4 KiB pages; total_time_breakdown_stall
# and kernel_stat.iterN.exe_time: GPU cycles at its GPU_frequency_GHz, 1.2, so the seconds of
# G10's published figures, cycles / 1e9, are 1.2 x the time its kernels take); its FlashNeuron
# and G10-GDS simulator writes total_* instead (ms, bytes); its output folder's sim_result.final
# is kept as g10-*.final.
# Without flex and bison (not root, or no apt-get) the simulator is built without its CNN
# parser, which the transformer graphs compared here never use.  G10's policies map to llmio's: lru = lru, deepUM =
# prefetch-lru, FlashNeuron = flashneuron, prefetch_lru (G10's own, as its scripts name it) =
# g10, G10GDSSSD (G10-GDS: no host memory) = g10 --host_bytes 0.
#
#   bench/g10_compare.sh [--g10-src DIR] [--execute DIR] [--out DIR]
#                        [--budgets "40 30 20 16 8 4"] [--g10-policies P] [--g10-logs DIR]
#                        [--llmio BIN]
#     --g10-src   a checkout of platformxlab/G10 (default: none, llmio's half alone)
#     --execute   also execute every plan on the tensor store in DIR (bytes x 0.002, kernel
#                 times x 0.05, no host tier: every transfer through the store; the SSD tier
#                 calibrated there): the measured stall beside the simulated one
#     --out       where the tables, the JSON and the chart go (default ./g10-compare-out)
#     --budgets   fast-tier budgets in GiB (default 40 30 20 16 8 4)
#     --g10-policies  G10's policies to run (default "prefetch_lru deepUM FlashNeuron lru
#                 G10GDSSSD";
#                 each run takes minutes: BERT 1 to 5, ViT over 10 on 2 cores)
#     --g10-logs  G10's run logs of an earlier pass (DIR/g10-GRAPH-BUDGET-POLICY.log and
#                 .final): the tables from them, nothing of G10's run
#     --llmio     the llmio binary (default build/llmio)
# Writes $OUT/compare.md (the tables), $OUT/llmio-GRAPH-BUDGET.json, and with gnuplot
# $OUT/ratio.png (ratio to ideal against the budget, per policy and graph: llmio's lines,
# G10's simulator's points).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=$ROOT/g10-compare-out
G10_SRC=""
EXEC_DIR=""
BUDGETS="40 30 20 16 8 4"
G10_POLICIES="prefetch_lru deepUM FlashNeuron lru G10GDSSSD"
G10_LOGS=""
LLMIO=$ROOT/build/llmio

usage() { sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--g10-src) G10_SRC=$2; shift 2 ;;
	--execute) EXEC_DIR=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--budgets) BUDGETS=$2; shift 2 ;;
	--g10-policies) G10_POLICIES=$2; shift 2 ;;
	--g10-logs) G10_LOGS=$2; shift 2 ;;
	--llmio) LLMIO=$2; shift 2 ;;
	-h | --help) usage 0 ;;
	*) echo "g10_compare.sh: unknown option $1" >&2; usage ;;
	esac
done
[ -x "$LLMIO" ] || { echo "g10_compare.sh: $LLMIO is not built (scripts/bootstrap.sh build)" >&2; exit 1; }
mkdir -p "$OUT" || exit 1

# graph: llmio's name, G10's net file, G10's results folder, batch, G10's kernel time sum (s)
GRAPHS=("BERT BERT_Base BERT_Base 256 7.28547" "ViT VIT VIT 1280 3.71595")

# ---- llmio ----
for g in "${GRAPHS[@]}"; do
	read -r name net _ batch cs <<<"$g"
	for b in $BUDGETS; do
		"$LLMIO" run --workload migrate --lifetimes "$ROOT/tests/data/g10/$net.txt" \
			--batch "$batch" --compute_s "$cs" --budget "${b}g" --simulate --quiet \
			--json "$OUT/llmio-$name-$b.json" >/dev/null 2>&1 || true
		# no host tier: what G10-GDS is beside
		"$LLMIO" run --workload migrate --lifetimes "$ROOT/tests/data/g10/$net.txt" \
			--batch "$batch" --compute_s "$cs" --budget "${b}g" --host_bytes 0 --simulate \
			--quiet --json "$OUT/llmio-$name-$b-nohost.json" >/dev/null 2>&1 || true
	done
done

# ---- executed on the store, scaled ----
if [ -n "$EXEC_DIR" ]; then
	mkdir -p "$EXEC_DIR" || exit 1
	for g in "${GRAPHS[@]}"; do
		read -r name net _ batch cs <<<"$g"
		for b in $BUDGETS; do
			"$LLMIO" run --workload migrate --lifetimes "$ROOT/tests/data/g10/$net.txt" \
				--batch "$batch" --compute_s "$cs" --budget "${b}g" --host_bytes 0 \
				--directory "$EXEC_DIR" --scale 0.002 --time_scale 0.05 --quiet \
				--json "$OUT/exec-$name-$b.json" >/dev/null 2>&1 || true
		done
	done
fi

# ---- G10's simulator ----
build_without_parser() { # build_without_parser SRC: G10's gpg with no flex or bison
	local src=$1
	cat >"$src/y.tab.h" <<'HDR'
#ifndef G10_COMPARE_YTAB_H
#define G10_COMPARE_YTAB_H
#include "location.h"
enum yytokentype {
	T_Sequential = 258, T_Conv2d, T_ReLU, T_MaxPool2d, T_AdaptiveAvgPool2d, T_Linear, T_Dropout,
	T_BatchNorm2d, T_kernel_size, T_stride, T_padding, T_bias, T_inplace, T_dilation, T_ceil_mode,
	T_output_size, T_in_features, T_out_features, T_p, T_eps, T_momentum, T_affine,
	T_track_running_stats, T_Identifier, T_IntConstant, T_DoubleConstant, T_BoolConstant
};
union YYSTYPE {
	int integerConstant;
	bool boolConstant;
	char *stringConstant;
	double doubleConstant;
	char identifier[MaxIdentLen + 1];
	void *ptr;
};
typedef union YYSTYPE YYSTYPE;
extern YYSTYPE yylval;
#endif
HDR
	cat >"$src/no_parser.cc" <<'SRC'
#include <cstdio>
#include <cstdlib>
#include "scanner.h"
#include "y.tab.h"
YYSTYPE yylval;
struct yyltype yylloc;
char *yytext;
int yydebug;
int yylex() { return 0; }
void yyrestart(FILE *) {}
void InitScanner() {}
void InitParser() {}
const char *GetLineNumbered(int) { return ""; }
int yyparse() { fprintf(stderr, "this build reads transformer graphs only (no flex, bison)\n"); exit(1); }
SRC
	(cd "$src" && for f in ast analysis errors utility libyywrap codegen simulationComponents \
		simulationEvents simulator main no_parser; do
		g++ -O2 -w -std=c++17 -c "$f.cc" -o "$f.o" || exit 1
	done && g++ -o gpg ./*.o -lpthread)
}

G10_OK=0
if [ -n "$G10_LOGS" ]; then
	[ "$G10_LOGS" -ef "$OUT" ] || cp "$G10_LOGS"/g10-*.log "$G10_LOGS"/g10-*.final "$OUT/" 2>/dev/null
	G10_OK=2 # read, not run
elif [ -n "$G10_SRC" ]; then
	if [ ! -f "$G10_SRC/src/Makefile" ]; then
		echo "g10_compare.sh: $G10_SRC is not a checkout of platformxlab/G10 (no src/Makefile)" >&2
	elif ! command -v g++ >/dev/null; then
		echo "g10_compare.sh: G10's simulator needs g++: llmio's half only" >&2
	else
		SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/g10-sim.XXXXXX") || exit 1
		trap 'rm -rf "$SCRATCH"' EXIT
		cp -r "$G10_SRC/src" "$G10_SRC/frontend" "$G10_SRC/results" "$SCRATCH/" || exit 1
		# G10's Stat::analyzeStat() reads its statistics files back while their ofstreams
		# (open in append mode) still hold the last buffer: the PCIe file is cut mid-line and
		# the run aborts (simulationComponents.cc: "Invalid line ... in stat file"), or loses
		# its last lines.  Flush them first; the simulation itself is untouched.
		sed -i 's|^void Stat::analyzeStat() {$|&\n  for (auto \&p : output_files) get<1>(p.second).flush();|' \
			"$SCRATCH/src/simulationComponents.cc" || exit 1
		if ! command -v flex >/dev/null || ! command -v bison >/dev/null; then
			# G10's Makefile generates its CNN parser with them (Debian packages)
			if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
				echo "g10_compare.sh: installing flex and bison for G10's Makefile" >&2
				apt-get install -y flex bison >"$OUT/apt.log" 2>&1 ||
					echo "g10_compare.sh: apt-get install flex bison failed: $OUT/apt.log" >&2
			else
				echo "g10_compare.sh: no flex or bison (apt-get install flex bison as root):" \
					"G10's simulator without its CNN parser" >&2
			fi
		fi
		if command -v flex >/dev/null && command -v bison >/dev/null && command -v make >/dev/null; then
			make -C "$SCRATCH/src" -j"$(nproc)" >"$OUT/g10-build.log" 2>&1 && G10_OK=1
		else
			# no flex or bison: the simulator without its CNN parser (bison's header and the
			# scanner's entry points stood in for), which the transformer graphs never call
			build_without_parser "$SCRATCH/src" >"$OUT/g10-build.log" 2>&1 && G10_OK=1
		fi
		[ "$G10_OK" = 1 ] || echo "g10_compare.sh: G10's build failed: $OUT/g10-build.log" >&2
	fi
fi
if [ "$G10_OK" = 1 ]; then
	for g in "${GRAPHS[@]}"; do
		read -r name net res batch _ <<<"$g"
		borden=210
		[ "$name" = ViT ] && borden=184
		for b in $BUDGETS; do
			for pol in $G10_POLICIES; do
				mig="" pf=0 evc=LRU deg="" host=128
				case $pol in
				G10GDSSSD) mig="migration_policy        G10GDSSSD" host=0 ;; # as genconfigs.py
				deepUM) mig="migration_policy        DEEPUM" pf=1 evc=DEEPUM deg="prefetch_degree         8" ;;
				FlashNeuron) mig="migration_policy        FLASHNEURON" pf=1 ;;
				prefetch_lru) pf=1 ;;
				esac
				cfg=$SCRATCH/src/$name-$b-$pol.config
				cat >"$cfg" <<EOF
output_folder           ../results/$res/cmp-$batch-$b-$pol
is_simulation           1
is_transformer          1
trans_borden            $borden
batch_size              $batch
input_H                 224
input_W                 224
num_iteration           2
num_threads             $(nproc)
nn_model_input_file     ../frontend/Nets/$net.txt
orig_kernel_time_file   ../results/$res/cudnn$batch.txt
pf_kernel_time_file     ../results/$res/cudnn${batch}PF.txt
input_pf_kernel_time_file ../results/$res/cudnn${batch}InputPF.txt
workspace_size_file       ../results/$res/cudnn${batch}Workspace.txt
stat_output_file        sim_result
is_UVM                  1
use_prefetch            $pf
eviction_policy         $evc
$mig
$deg
system_latency_us       45
CPU_PCIe_bandwidth_GBps 15.754
CPU_memory_line_GB      $host
GPU_memory_size_GB      $b
GPU_frequency_GHz       1.2
GPU_PCIe_bandwidth_GBps 15.754
GPU_malloc_uspB         0.000000814
GPU_free_uspB           0
SSD_PCIe_bandwidth_GBps 3.2
SSD_read_latency_us     12
SSD_write_latency_us    16
SSD_latency_us          20
PCIe_latency_us         5
PCIe_batch_size_page    50
delta_parameter         0.5
EOF
				(cd "$SCRATCH/src" && timeout 3600 ./gpg "$cfg") >"$OUT/g10-$name-$b-$pol.log" 2>&1 ||
					echo "g10_compare.sh: G10's run $name $b GiB $pol failed: $OUT/g10-$name-$b-$pol.log" >&2
				fin=$SCRATCH/results/$res/cmp-$batch-$b-$pol/sim_result.final
				[ -f "$fin" ] && cp "$fin" "$OUT/g10-$name-$b-$pol.final"
			done
		done
	done
fi

# ---- the tables ----
python3 - "$OUT" "$BUDGETS" "$([ "$G10_OK" = 0 ] && echo 0 || echo 1)" "${GRAPHS[@]}" >"$OUT/compare.md" <<'PY'
import json, os, re, sys

out, budgets, g10_ok = sys.argv[1], sys.argv[2].split(), sys.argv[3] == "1"
graphs = [g.split() for g in sys.argv[4:]]
# llmio's policy (its run), G10's policy as its scripts name it
pols = [("lru", "", "lru"), ("prefetch-lru", "", "deepUM"), ("flashneuron", "", "FlashNeuron"),
        ("g10", "", "prefetch_lru"), ("g10", "-nohost", "G10GDSSSD"), ("g10-lite", "", None)]
GIB = 2 ** 30
GPU_HZ = 1.2e9  # G10's GPU_frequency_GHz: its UVM simulator counts GPU cycles


def llmio(name, b, run=""):
    try:
        d = json.load(open(f"{out}/llmio-{name}-{b}{run}.json"))
    except (OSError, ValueError):
        return {}
    r = {}
    for p in d["runs"][0]["phases"]:
        m = p["metrics"]
        if "stall_s" in m and "cannot run" not in p.get("note", ""):
            r[p["name"][len("simulate-"):]] = m
    return r


def g10(name, b, pol):
    """G10's simulator's result: a dict, "cannot run", or None (not run)."""
    base = f"{out}/g10-{name}-{b}-{pol}"
    try:
        t = open(base + ".log", errors="replace").read()
    except OSError:
        return None
    if "No enough space to allocate" in t or "cannot support this large model" in t:
        return "cannot run"
    if os.path.exists(base + ".final"):  # the statistics file of its output folder
        t += "\n" + open(base + ".final", errors="replace").read()
    if "total_exe_time = " in t:  # its FlashNeuron / G10-GDS simulator: ms and bytes
        v = dict(re.findall(r"^(\S+) = ([-0-9.e+]+)$", t, re.M))
        try:
            exe, stall = float(v["total_exe_time"]) / 1e3, float(v["total_time_breakdown_stall"]) / 1e3
            return {"host_out_bytes": 0, "host_in_bytes": 0,
                    "ssd_out_bytes": float(v["total_gpu2ssd_byte"]),
                    "ssd_in_bytes": float(v["total_ssd2gpu_byte"]),
                    "stall_s": stall, "step_s": exe, "ratio_to_ideal": (exe - stall) / exe}
        except (KeyError, ZeroDivisionError):
            return None
    v = {k: float(x) for k, x in re.findall(r"^(\S+) = ([-0-9.e+]+)$", t, re.M)}
    its = [int(m) for m in re.findall(r"^kernel_stat\.iter(\d+)\.exe_time = ", t, re.M)]
    if not its:
        return None
    i = f"iter{max(its)}"  # the steady state: the last iteration (the first starts cold)
    try:
        exe, ideal = v[f"kernel_stat.{i}.exe_time"], v[f"kernel_stat.{i}.ideal_exe_time"]
        # G10's lru run prints no page counts past its first iteration: None, shown as -
        pg = lambda k: v[f"pcie_stat.{i}.{k}"] * 4096 if f"pcie_stat.{i}.{k}" in v else None
        return {"host_out_bytes": pg("outgoing_pg_cpu"), "host_in_bytes": pg("incoming_pg_cpu"),
                "ssd_out_bytes": pg("outgoing_pg_ssd"), "ssd_in_bytes": pg("incoming_pg_ssd"),
                "stall_s": v[f"total_time_breakdown_stall.{i}"] / GPU_HZ, "step_s": exe / GPU_HZ,
                "ratio_to_ideal": ideal / exe}
    except (KeyError, ZeroDivisionError):
        return None


def cell(m):
    if not m:
        return "cannot run"
    return (f"{m['ratio_to_ideal']:.3f} ({m['stall_s']:.2f} s; host {m['host_out_bytes'] / GIB:.1f}"
            f", SSD {m['ssd_out_bytes'] / GIB:.1f} GiB out)")


print("# llmio's planner beside G10's simulator\n")
print("Ratio to ideal (stall; GiB out each tier, the same back) at each budget, G10's tiers.\n")
for name, net, res, batch, cs in graphs:
    print(f"## {name}, batch {batch}\n")
    heads = [p + (" (no host)" if run else "") for p, run, _ in pols]
    print("| budget GiB | " + " | ".join(heads) + " |")
    print("| --- " * (len(pols) + 1) + "|")
    for b in budgets:
        print(f"| {b} | " + " | ".join(cell(llmio(name, b, run).get(p)) for p, run, _ in pols) + " |")
    print()
    if not g10_ok:
        continue
    print(f"### {name}: against G10's simulator (llmio / G10; * over 10 % apart)\n")
    print("| budget GiB | llmio / G10 | host GiB out | SSD GiB out | stall s | step s | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for b in budgets:
        for p, run, gp in pols:
            if gp is None:
                continue
            a, g = llmio(name, b, run).get(p), g10(name, b, gp)
            if g is None:
                continue
            label = f"{p}{' no host' if run else ''} / {gp}"
            if not a or g == "cannot run":
                print(f"| {b} | {label} | {'llmio cannot run' if not a else 'runs'} / "
                      f"{'cannot run' if g == 'cannot run' else 'runs'} | | | | |")
                continue
            row = []
            for k, s in [("host_out_bytes", GIB), ("ssd_out_bytes", GIB), ("stall_s", 1),
                         ("step_s", 1), ("ratio_to_ideal", 1)]:
                if g[k] is None:
                    row.append(f"{a[k] / s:.2f} / -")
                    continue
                x, y = a[k] / s, g[k] / s
                far = abs(x - y) > 0.1 * max(abs(y), 1e-9) and abs(x - y) > 0.01
                row.append(f"{x:.2f} / {y:.2f}{' *' if far else ''}")
            print(f"| {b} | {label} | " + " | ".join(row) + " |")
    print()
execd = [(n, b) for n, *_ in graphs for b in budgets if os.path.exists(f"{out}/exec-{n}-{b}.json")]
if execd:
    print("## Executed on the tensor store (no host tier, bytes x 0.002, kernels x 0.05)\n")
    print("Stall s, simulated beside the run (the store's one SSD queue, its calibrated SSD) / "
          "measured.\n")
    ep = [p for p, run, _ in pols if not run]
    print("| graph | budget GiB | " + " | ".join(ep) + " |")
    print("| --- " * (len(ep) + 2) + "|")
    for n, b in execd:
        ph = {p["name"]: p for p in json.load(open(f"{out}/exec-{n}-{b}.json"))["runs"][0]["phases"]}
        row = []
        for p in ep:
            s, r = ph.get(f"simulate-{p}", {}).get("metrics", {}), ph.get(f"run-{p}", {}).get("metrics", {})
            row.append(f"{s['stall_s']:.3f} / {r['stall_s']:.3f}" if "stall_s" in s and "stall_s" in r
                       else "cannot run")
        print(f"| {n} | {b} | " + " | ".join(row) + " |")
    print()
if not g10_ok:
    print("G10's simulator was not run (no --g10-src, or no g++).")

# the chart's data: ratio to ideal per budget, llmio's policies then G10's simulator's
with open(f"{out}/ratio.dat", "w") as f:
    for name, *_ in graphs:
        f.write(f"# {name}: budget " + " ".join(p + run for p, run, _ in pols) + " " +
                " ".join("G10:" + gp for _, _, gp in pols if gp) + "\n")
        for b in budgets:
            lm = [llmio(name, b, run).get(p, {}).get("ratio_to_ideal", "NaN") for p, run, _ in pols]
            gm = [g10(name, b, gp) for _, _, gp in pols if gp]
            gm = [m["ratio_to_ideal"] if isinstance(m, dict) else "NaN" for m in gm]
            f.write(f"{b} " + " ".join(str(x) for x in lm + gm) + "\n")
        f.write("\n\n")
PY

if command -v gnuplot >/dev/null; then
	gnuplot <<EOF
set terminal pngcairo size 1200,460
set output '$OUT/ratio.png'
set multiplot layout 1,2
set xlabel 'fast-tier budget (GiB)'
set ylabel 'ratio to ideal (1 = unlimited memory)'
set yrange [0:1.05]
set key font ',8'
set logscale x 2
set colorsequence classic
names = 'lru prefetch-lru flashneuron g10 g10-no-host g10-lite'
gnames = 'lru deepUM FlashNeuron G10 G10-GDS'
do for [i=0:1] {
  if (i == 0) { set key bottom right } else { set key top left }
  set title (i == 0 ? 'BERT-Base, batch 256' : 'ViT, batch 1280') . ': llmio (lines), G10 simulator (points)'
  plot for [c=2:7] '$OUT/ratio.dat' index i using 1:c with linespoints lc c-1 title word(names, c - 1), \
       for [c=8:12] '$OUT/ratio.dat' index i using 1:c with points pt 7 ps 1.5 lc c-7 title 'G10 sim: '.word(gnames, c - 7)
}
unset multiplot
EOF
fi
echo "g10_compare.sh: $OUT/compare.md"
