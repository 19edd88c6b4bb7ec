#!/bin/bash
# SSDTrain-style activation offload from PyTorch on CPU, side by side (docs/offload.md):
#   off        no hooks
#   keep       llmio_offload's hooks, nothing stored (the hook overhead baseline)
#   store      llmio_offload policy "all" through the tensor store (O_DIRECT)
#   torchsave  hooks that torch.save each saved tensor to its own file (PyTorch's tutorial)
# each mode in its own process (VmHWM), the GPT-2-small-like model of the reference prototype
# (vocab 8192, d 384, 6 layers, 6 heads, T 256, batch 8), then the issue's targets checked.
#
#   bench/offload.sh [LLMIO] [DIR] [STEPS]   (defaults: build/llmio, ./llmio-bench-offload, 10)
#
# OFFLOAD_MODEL_ARGS and OFFLOAD_STORE_ARGS add arguments of tests/torch_offload_model.py (the
# last of a repeated one wins), e.g. OFFLOAD_STORE_ARGS="--inflight 67108864".
#
# ROUNDS=R (default 1) runs the four modes R times, interleaved (off keep store torchsave, off
# keep ...), each process STEPS steps, and pools their steps (each process's first left out):
# on a busy machine the load then drifts over every mode alike.  Beside wall time the report
# shows each mode's CPU seconds per step (the process's, every thread, and the compute
# thread's) and minor page faults per step, which load inflates far less.
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
export LLMIO_LIB=${LLMIO_LIB:-$(dirname "$LLMIO")/libllmio.so}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# large tensors in their own mappings, unmapped when freed: VmHWM follows the live tensors
export MALLOC_MMAP_THRESHOLD_=65536
mkdir -p "$DIR/store" "$DIR/torchsave" "$DIR/out"
trap 'rm -rf "$DIR"' EXIT

cached() { awk '/^Cached:/ {printf "%.0f\n", $2 * 1024}' /proc/meminfo; } # mawk prints large products as 2.6e+09
mode() { # mode NAME ARGS...
	local name=$1 c0 c1; shift
	sync
	c0=$(cached)
	"$PY" "$SRC/tests/torch_offload_model.py" "${MODEL_ARGS[@]}" --json "$DIR/out/$name.json" "$@"
	c1=$(cached)
	echo "{\"cache_growth\": $((c1 - c0))}" >"$DIR/out/$name.cache.json"
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n): $(getconf _NPROCESSORS_ONLN) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "tree $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?'), model ${MODEL_ARGS[*]}, store ${STORE_ARGS[*]}, OPENBLAS_NUM_THREADS=1"
ROUNDS=${ROUNDS:-1}
for ((round = 1; round <= ROUNDS; round++)); do
	mode "off.$round" --mode off
	mode "keep.$round" --mode keep
	mode "store.$round" --mode all --dir "$DIR/store" "${STORE_ARGS[@]}"
	mode "torchsave.$round" --mode torchsave --dir "$DIR/torchsave"
done
echo
echo "rounds $ROUNDS (modes interleaved), load at the end $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" - "$DIR/out" "$ROUNDS" <<'EOF'
import json, os, statistics, sys

d, rounds = sys.argv[1], int(sys.argv[2])
r, every = {}, {}
for m in ("off", "keep", "store", "torchsave"):
    every[m] = []
    for k in range(1, rounds + 1):
        v = json.load(open(os.path.join(d, "%s.%d.json" % (m, k))))
        v.update(json.load(open(os.path.join(d, "%s.%d.cache.json" % (m, k)))))
        every[m].append(v)
    r[m] = every[m][-1]  # one process's own figures (VmHWM, bytes) : the last round's


def pooled(m, key):
    # every process's steps but its first (warm-up), over all rounds
    return [x for v in every[m] for x in (v.get(key, [])[1:] or v.get(key, []))]


steps = len(r["off"]["step_s"])
med = {m: statistics.median(pooled(m, "step_s")) for m in r}
cpu = {m: statistics.median(pooled(m, "cpu_s") or [0]) for m in r}
tcpu = {m: statistics.median(pooled(m, "thread_cpu_s") or [0]) for m in r}
flt = {m: statistics.median(pooled(m, "minflt") or [0]) for m in r}
MiB = 1 << 20
same = all(v["losses"] == every["off"][0]["losses"] and v["grads"] == every["off"][0]["grads"]
           for m in r for v in every[m])
print()
print("| mode | median step s | vs keep | CPU s/step (all threads) | compute thread CPU s/step | minor faults/step | VmHWM MiB | offloaded MiB/step | Cached growth MiB (whole machine) | losses = off |")
print("|---|---|---|---|---|---|---|---|---|---|")
for m, v in r.items():
    print("| %s | %.3f | %.2fx | %.3f | %.3f | %d | %d | %.1f | %.1f | %s |" % (
        m, med[m], med[m] / med["keep"], cpu[m], tcpu[m], flt[m], v["vmhwm"] // MiB,
        v["offloaded_bytes"] / steps / MiB, v["cache_growth"] / MiB,
        "yes" if all(x["losses"] == every["off"][0]["losses"] and x["grads"] == every["off"][0]["grads"] for x in every[m]) else "NO"))
s = r["store"]["store"]
st = r["store"]
per_step = r["store"]["offloaded_bytes"] / steps
busy = s["io_busy_ns"] / 1e9 / steps
# overlap, the issue's "fraction of I/O hidden behind compute": of the store's I/O-busy time,
# the part during which the compute thread did not wait for it.  The compute thread waits for
# the store only in the hooks: unpack for reads (wait_s), pack for writes beyond the in-flight
# bound (pack_wait_s); an I/O that finished while compute ran costs no wait and counts hidden.
# The step-time difference store - keep is no measure of it: it also holds CPU work (the hooks,
# the copies, contention for the two CPUs), reported as the step-time target.
exposed = (st.get("wait_s", 0) + st.get("pack_wait_s", 0)) / steps
overlap = 1 - min(exposed, busy) / busy if busy else 0
saved = (r["keep"]["vmhwm"] - r["store"]["vmhwm"]) / per_step if per_step else 0
over_store = med["store"] - med["keep"]
over_save = med["torchsave"] - med["keep"]
ratio = over_save / over_store if over_store > 0 else float("inf")
# the store file's pages in the page cache at the end (fincore): /proc/meminfo's Cached moves
# with everything else the machine does, so it is shown per mode but not judged
cache = r["store"]["store_page_cache"] / (r["store"]["offloaded_bytes"] / steps) if r["store"]["offloaded_bytes"] else 0
print()
print("store: %d puts, %.1f MiB written on the device, %.1f MiB read, %d stalls (%.3f s), I/O busy %.3f s/step, "
      "store overlap %.2f, prefetch hits %d, peak staging %.1f MiB, I/O thread CPU %.2f s" % (
          s["puts"], s["device_bytes_written"] / MiB, s["device_bytes_read"] / MiB, s["stalls"],
          s["stall_ns"] / 1e9, busy, s["overlap"], s["prefetch_hits"], s["peak_staging_bytes"] / MiB,
          s["cpu_ns"] / 1e9))
print()
print("store copies: %.1f MiB staged (copied into or out of staging), %.1f MiB moved straight from/into tensors; "
      "hooks on the compute thread per step: pack %.3f s (waits for writes beyond the in-flight bound included), "
      "unpack %.3f s of which %.3f s waiting for reads; read-ahead peak %.1f MiB" % (
          s.get("staged_bytes", 0) / MiB, s.get("direct_bytes", 0) / MiB, st.get("pack_s", 0) / steps,
          st.get("unpack_s", 0) / steps, st.get("wait_s", 0) / steps, st.get("peak_ahead_bytes", 0) / MiB))
print()
print("edges: %.1f MiB/step of partial 4 KiB units at tensors' edges (staged each way), %.1f MiB/step on the "
      "device in whole units; pack waited %.3f s/step for writes; unpack's tensors: %d from the pool, %d fresh" % (
          st.get("edge_bytes", 0) / steps / MiB, st.get("unit_bytes", 0) / steps / MiB,
          st.get("pack_wait_s", 0) / steps, st.get("pool_hits", 0), st.get("pool_misses", 0)))
cpu_store, cpu_save = cpu["store"] - cpu["keep"], cpu["torchsave"] - cpu["keep"]
print()
print("CPU added per step over keep (all threads): store %.3f s, torchsave %.3f s (%.1fx); compute thread: "
      "store %.3f s, torchsave %.3f s" % (cpu_store, cpu_save, cpu_save / cpu_store if cpu_store > 0 else float("inf"),
                                          tcpu["store"] - tcpu["keep"], tcpu["torchsave"] - tcpu["keep"]))
print()
print("| target | measured | met |")
print("|---|---|---|")
rows = [
    ("step time with the store <= 1.10x hooks-only", "%.2fx" % (med["store"] / med["keep"]), med["store"] <= 1.10 * med["keep"]),
    ("overlap >= 80 % (1 - compute thread's waits for the store / I/O busy)", "%.0f %%" % (100 * overlap), overlap >= 0.8),
    ("peak memory drop >= 40 % of bytes offloaded per step", "%.0f %%" % (100 * saved), saved >= 0.4),
    (">= 3x less step-time overhead than torch.save hooks", "%.1fx" % ratio, ratio >= 3),
    ("page cache held by the store's file < 5 % of bytes offloaded per step", "%.2f %%" % (100 * cache), 0 <= cache < 0.05),
    ("losses and gradients bitwise equal to no hooks, every mode and round", "yes" if same else "NO", same),
]
for t, v, ok in rows:
    print("| %s | %s | %s |" % (t, v, "yes" if ok else "**no**"))
EOF
