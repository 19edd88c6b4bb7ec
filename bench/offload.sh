#!/bin/bash
# SSDTrain-style activation offload from PyTorch on CPU, side by side, as users run it
# (docs/offload.md, "Benchmarks"): glibc's default allocator settings, the hooks as the docs
# show them.  Modes, each in its own process:
#   off            no hooks
#   keep           llmio_offload's hooks, nothing stored (the hooks' own overhead)
#   store          llmio_offload policy "all" through the tensor store (O_DIRECT), model= given
#   store-nomodel  the same without model= and layers= (the hooks learn from the first step)
#   store-notrim   store with trim_bytes=0: no malloc_trim (what the memory saving costs)
#   store-torchalloc  store with cpu_alloc=False: torch's own CPU allocator (posix_memalign)
#                  while the hooks are active, not libllmio_torch's (what that allocator saves)
#   torchsave      hooks that torch.save each saved tensor to its own file (PyTorch's tutorial)
#   off-mmap       no hooks with MALLOC_MMAP_THRESHOLD_=65536: every freed tensor unmapped, the
#                  lowest peak the baseline can have (memory only; not how users run)
# on the GPT-2-small-like model of the reference prototype (vocab 8192, d 384, 6 layers, 6
# heads, T 256, batch 8, fp32, SGD), then the issue's targets checked.
#
#   bench/offload.sh [LLMIO] [DIR] [STEPS]   (defaults: build/llmio, ./llmio-bench-offload, 10)
#
# ROUNDS=R (default 1) runs the modes R times, interleaved (off keep store ... off keep ...),
# and pools their steps (each process's first left out), so that a drifting load falls on every
# mode alike; the load average is printed before every round.  OFFLOAD_MODEL_ARGS and
# OFFLOAD_STORE_ARGS add arguments of tests/torch_offload_model.py (the last of a repeated one
# wins); MODES="off keep store" runs a subset (keep, store and torchsave are needed for the
# targets).  PRELOAD=LIB runs every mode with LD_PRELOAD=LIB: another allocator in glibc malloc's
# place (tcmalloc's libtcmalloc_minimal.so.4, which scripts/bootstrap.sh installs, or jemalloc's
# libjemalloc.so.2); the hooks then leave the memory to it (no malloc_trim).  Not how the
# targets are judged (as users run it: glibc's malloc), but where the step time goes: the header
# says whether the allocator reuses a freed block for the next tensor of its size
# (bench/aligned_reuse.c, built here with cc and run under the same PRELOAD).  GLIBC_TUNABLES,
# when set, is passed on (and named in the header): glibc.malloc.tcache_count=0 lets glibc 2.36
# merge the spare bytes of aligned blocks again (docs/offload.md, "memory").
#
# Peak host memory is counted fairly (bench/hostmem.py): the larger of the process's VmHWM and
# the largest sample (every 10 ms) of its RSS plus the page cache held by the files under its
# directory, so that torch.save's files, which leave the tensors' bytes in the page cache, are
# not credited with freeing them.
#
# Needs /usr/bin/python3 with torch (scripts/bootstrap.sh installs python3-torch and
# libopenblas0-pthread).  DIR must be on the storage to measure (not tmpfs); it is removed at
# the end.  Prints a markdown report (the form of bench/results/2026-12-offload.md).
set -eu
LLMIO=${1:-build/llmio}
DIR=${2:-./llmio-bench-offload}
STEPS=${3:-10}
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
MODEL_ARGS=(--vocab 8192 --d 384 --layers 6 --heads 6 --seq 256 --batch 8 --steps "$STEPS")
MODEL_ARGS+=(${OFFLOAD_MODEL_ARGS:-})
# the store's budgets: staging (puts' copies), borrowed bytes in flight, read-ahead window
STORE_ARGS=(--staging $((16 << 20)) --inflight $((64 << 20)) --readahead $((64 << 20)) --capacity $((2 << 30)))
STORE_ARGS+=(${OFFLOAD_STORE_ARGS:-})
MODES=${MODES:-off keep store store-nomodel store-notrim store-torchalloc torchsave off-mmap}
export LLMIO_LIB=${LLMIO_LIB:-$(dirname "$LLMIO")/libllmio.so}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# as users run: no allocator variables (off-mmap sets its own for its process only)
unset MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_ MALLOC_TOP_PAD_ MALLOC_ARENA_MAX
PRELOAD=${PRELOAD:-}
if [ -n "$PRELOAD" ] && [ ! -e "$PRELOAD" ]; then
	echo "offload.sh: PRELOAD=$PRELOAD: no such file (the allocator's library, e.g. /lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4)" >&2
	exit 2
fi
preload=() alloc="glibc malloc defaults"
if [ -n "$PRELOAD" ]; then
	preload=("LD_PRELOAD=$PRELOAD") alloc="LD_PRELOAD=$PRELOAD in place of glibc's malloc"
elif [ -n "${GLIBC_TUNABLES:-}" ]; then
	alloc="glibc malloc with GLIBC_TUNABLES=$GLIBC_TUNABLES"
fi
mkdir -p "$DIR/out"
trap 'rm -rf "$DIR"' EXIT

mode() { # mode NAME ROUND: one process, its JSON in $DIR/out/NAME.ROUND.json
	local name=$1 r=$2 d=$DIR/$1 env=() args=()
	mkdir -p "$d"
	case $name in
	off) args=(--mode off) ;;
	keep) args=(--mode keep) ;;
	store) args=(--mode all --dir "$d" "${STORE_ARGS[@]}") ;;
	store-nomodel) args=(--mode all --no-model 1 --dir "$d" "${STORE_ARGS[@]}") ;;
	store-notrim) args=(--mode all --trim 0 --dir "$d" "${STORE_ARGS[@]}") ;;
	store-torchalloc) args=(--mode all --cpu-alloc 0 --dir "$d" "${STORE_ARGS[@]}") ;;
	torchsave) args=(--mode torchsave --dir "$d") ;;
	off-mmap) args=(--mode off) env=(MALLOC_MMAP_THRESHOLD_=65536) ;;
	*) echo "unknown mode $name" >&2; exit 2 ;;
	esac
	sync
	env "${env[@]}" "${preload[@]}" "$PY" "$SRC/bench/hostmem.py" "$DIR/out/$name.$r.mem.json" "$d" -- \
		"$PY" "$SRC/tests/torch_offload_model.py" "${MODEL_ARGS[@]}" --json "$DIR/out/$name.$r.json" "${args[@]}"
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n): $(getconf _NPROCESSORS_ONLN) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "tree $(git -C "$SRC" describe --always --dirty 2>/dev/null || echo '?'), model ${MODEL_ARGS[*]}, store ${STORE_ARGS[*]}, OPENBLAS_NUM_THREADS=1, $alloc"
if "${CC:-cc}" -O1 -o "$DIR/aligned_reuse" "$SRC/bench/aligned_reuse.c" 2>"$DIR/cc.err"; then
	echo
	echo "allocator: $(env "${preload[@]}" "$DIR/aligned_reuse")"
else
	echo "(bench/aligned_reuse.c did not build: $(head -c 300 "$DIR/cc.err"))"
fi
ROUNDS=${ROUNDS:-1}
loads=()
for ((round = 1; round <= ROUNDS; round++)); do
	loads+=("$(cut -d' ' -f1 /proc/loadavg)")
	for m in $MODES; do mode "$m" "$round"; done
done
loads+=("$(cut -d' ' -f1 /proc/loadavg)")
echo
echo "rounds $ROUNDS (modes interleaved: $MODES); 1-minute load average before each round and at the end: ${loads[*]}"

"$PY" - "$DIR/out" "$ROUNDS" "$MODES" <<'EOF2'
import json, os, statistics, sys

d, rounds, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
every = {}
for m in modes:
    every[m] = []
    for k in range(1, rounds + 1):
        v = json.load(open(os.path.join(d, "%s.%d.json" % (m, k))))
        v["mem"] = json.load(open(os.path.join(d, "%s.%d.mem.json" % (m, k))))
        # fair peak: the larger of VmHWM and the largest RSS + page-cache sample
        v["peak"] = max(v["vmhwm"], v["mem"]["peak_bytes"])
        every[m].append(v)


def pooled(m, key):
    # every process's steps but its first (warm-up), over all rounds
    return [x for v in every[m] for x in (v.get(key, [])[1:] or v.get(key, []))]


def med_of(m, f):
    return statistics.median(f(v) for v in every[m])


MiB = 1 << 20
ref = every[modes[0]][0]
steps = len(ref["step_s"])
med = {m: statistics.median(pooled(m, "step_s")) for m in modes}
cpu = {m: statistics.median(pooled(m, "cpu_s")) for m in modes}
tcpu = {m: statistics.median(pooled(m, "thread_cpu_s")) for m in modes}
flt = {m: statistics.median(pooled(m, "minflt")) for m in modes}
peak = {m: med_of(m, lambda v: v["peak"]) for m in modes}
hwm = {m: med_of(m, lambda v: v["vmhwm"]) for m in modes}
cache = {m: med_of(m, lambda v: v["mem"]["cache_at_peak"]) for m in modes}
offl = {m: med_of(m, lambda v: v["offloaded_bytes"] / steps) for m in modes}


def same(m):
    return all(v["losses"] == ref["losses"] and v["grads"] == ref["grads"] for v in every[m])


print()
print("| mode | median step s | vs off | CPU s/step (all threads) | compute thread CPU s/step | minor faults/step | VmHWM MiB | peak host memory MiB (RSS + page cache) | page cache at peak MiB | offloaded MiB/step | losses = off |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for m in modes:
    print("| %s | %.3f | %.2fx | %.3f | %.3f | %d | %d | %d | %d | %.1f | %s |" % (
        m, med[m], med[m] / med[modes[0]], cpu[m], tcpu[m], flt[m], hwm[m] // MiB, peak[m] // MiB,
        cache[m] // MiB, offl[m] / MiB, "yes" if same(m) else "NO"))


def overlap(m):
    # 1 - the compute thread's waits for the store (unpack's for reads, pack's for writes beyond
    # the in-flight bound) / the store's I/O-busy time, over every process of the mode
    busy = sum(v["store"]["io_busy_ns"] for v in every[m]) / 1e9
    waits = sum(v.get("wait_s", 0) + v.get("pack_wait_s", 0) for v in every[m])
    return (1 - min(waits, busy) / busy if busy else 0), waits / rounds / steps, busy / rounds / steps


for m in ("store", "store-nomodel", "store-notrim", "store-torchalloc"):
    if m not in every:
        continue
    v = every[m][-1]
    s = v["store"]
    ov, w, b = overlap(m)
    print()
    print("%s: overlap %.0f %% (waits %.3f s/step, I/O busy %.3f s/step, first step included); stalls %d; "
          "staged %.1f MiB, direct %.1f MiB; pool %d/%d; malloc_trim %d calls, %.3f s/step on the compute thread (%.3f CPU-s); "
          "torch's CPU allocator: %s%s" % (
              m, 100 * ov, w, b, s["stalls"], s["staged_bytes"] / MiB, s["direct_bytes"] / MiB,
              v.get("pool_hits", 0), v.get("pool_misses", 0), v.get("trims", 0), v.get("trim_s", 0) / steps,
              v.get("trim_cpu_s", 0) / steps,
              "libllmio_torch's (%d tensors)" % v.get("cpu_alloc_served", 0) if v.get("cpu_alloc_off", "") is None
              else "its own (%s)" % v.get("cpu_alloc_off", "?"),
              "; learned: %s saves a forward, %d kept (backward waited for them at its start)" % (
                  v.get("learned_saves"), len(v.get("learned_keep") or [])) if m == "store-nomodel" else ""))

rows = []
base = modes[0]
for m in ("store", "store-notrim", "store-torchalloc"):
    if {"keep", m} <= set(modes):
        rows.append(("step time with the store <= 1.10x hooks-only (%s / keep)" % m, "%.2fx" % (med[m] / med["keep"]),
                     med[m] <= 1.10 * med["keep"]))
for m in ("store", "store-nomodel", "store-notrim", "store-torchalloc"):
    if m in modes:
        ov = overlap(m)[0]
        rows.append(("overlap >= 80 %% (%s)" % m, "%.0f %%" % (100 * ov), ov >= 0.8))
for m in ("store", "store-nomodel", "store-notrim", "store-torchalloc"):
    for b in ("keep", "off", "off-mmap"):
        if m in modes and b in modes and offl[m]:
            drop = (peak[b] - peak[m]) / offl[m]
            rows.append(("peak host memory %s vs %s: drop >= 40 %% of the bytes offloaded per step" % (m, b),
                         "%.0f %% (%d of %d MiB)" % (100 * drop, (peak[b] - peak[m]) // MiB, offl[m] // MiB),
                         drop >= 0.4))
for m in ("store", "store-notrim", "store-torchalloc"):
    if {"torchsave", m} <= set(modes):
        for b in ("off", "keep"):
            if b in modes:
                o_st, o_ts = med[m] - med[b], med["torchsave"] - med[b]
                r = o_ts / o_st if o_st > 0 else float("inf")
                rows.append((">= 3x less step-time overhead than torch.save hooks (%s, over %s)" % (m, b),
                             "%.1fx (%.3f s against %.3f s a step)" % (r, o_st, o_ts), r >= 3))
        c_st, c_ts = cpu[m] - cpu[base], cpu["torchsave"] - cpu[base]
        rows.append(("CPU added per step over %s: %s / torch.save" % (base, m),
                     "%.3f s / %.3f s (%.1fx)" % (c_st, c_ts, c_ts / c_st if c_st > 0 else float("inf")), None))
        rows.append(("peak host memory %s <= torch.save hooks" % m,
                     "%d MiB against %d MiB" % (peak[m] // MiB, peak["torchsave"] // MiB),
                     peak[m] <= peak["torchsave"]))
if "store" in modes and offl["store"]:
    pc = med_of("store", lambda v: v["mem"]["peak_cache"]) / offl["store"]
    rows.append(("page cache held by the store's file < 5 % of the bytes offloaded per step (largest sample)",
                 "%.2f %%" % (100 * pc), pc < 0.05))
ok = all(same(m) for m in modes)
rows.append(("losses and gradients bitwise equal to no hooks, every mode and round", "yes" if ok else "NO", ok))
print()
print("| target | measured | met |")
print("|---|---|---|")
for t, v, met in rows:
    print("| %s | %s | %s |" % (t, v, "-" if met is None else "yes" if met else "**no**"))
EOF2
