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
mode off --mode off
mode keep --mode keep
mode store --mode all --dir "$DIR/store" "${STORE_ARGS[@]}"
mode torchsave --mode torchsave --dir "$DIR/torchsave"

"$PY" - "$DIR/out" <<'EOF'
import json, os, statistics, sys

d = sys.argv[1]
r = {}
for m in ("off", "keep", "store", "torchsave"):
    r[m] = json.load(open(os.path.join(d, m + ".json")))
    r[m].update(json.load(open(os.path.join(d, m + ".cache.json"))))
steps = len(r["off"]["step_s"])
med = {m: statistics.median(v["step_s"][1:] or v["step_s"]) for m, v in r.items()}
MiB = 1 << 20
print()
print("| mode | median step s | vs keep | VmHWM MiB | offloaded MiB/step | Cached growth MiB (whole machine) | losses = off |")
print("|---|---|---|---|---|---|---|")
for m, v in r.items():
    print("| %s | %.3f | %.2fx | %d | %.1f | %.1f | %s |" % (
        m, med[m], med[m] / med["keep"], v["vmhwm"] // MiB, v["offloaded_bytes"] / steps / MiB,
        v["cache_growth"] / MiB, "yes" if v["losses"] == r["off"]["losses"] and v["grads"] == r["off"]["grads"] else "NO"))
s = r["store"]["store"]
per_step = r["store"]["offloaded_bytes"] / steps
stall = max(0.0, med["store"] - med["keep"])
busy = s["io_busy_ns"] / 1e9 / steps
overlap = 1 - min(stall, busy) / busy if busy else 0
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
st = r["store"]
print()
print("store copies: %.1f MiB staged (copied into or out of staging), %.1f MiB moved straight from/into tensors; "
      "hooks on the compute thread per step: pack %.3f s (waits for writes beyond the in-flight bound included), "
      "unpack %.3f s of which %.3f s waiting for reads; read-ahead peak %.1f MiB" % (
          s.get("staged_bytes", 0) / MiB, s.get("direct_bytes", 0) / MiB, st.get("pack_s", 0) / steps,
          st.get("unpack_s", 0) / steps, st.get("wait_s", 0) / steps, st.get("peak_ahead_bytes", 0) / MiB))
print()
print("| target | measured | met |")
print("|---|---|---|")
rows = [
    ("step time with the store <= 1.10x hooks-only", "%.2fx" % (med["store"] / med["keep"]), med["store"] <= 1.10 * med["keep"]),
    ("overlap >= 80 % (1 - exposed stall / I/O busy)", "%.0f %%" % (100 * overlap), overlap >= 0.8),
    ("peak memory drop >= 40 % of bytes offloaded per step", "%.0f %%" % (100 * saved), saved >= 0.4),
    (">= 3x less step-time overhead than torch.save hooks", "%.1fx" % ratio, ratio >= 3),
    ("page cache held by the store's file < 5 % of bytes offloaded per step", "%.2f %%" % (100 * cache), 0 <= cache < 0.05),
]
for t, v, ok in rows:
    print("| %s | %s | %s |" % (t, v, "yes" if ok else "**no**"))
EOF
