#!/usr/bin/env bash
# python/llmio_offload.py: a small GPT-2-like decoder (tests/torch_offload_model.py) trains 10
# steps (2 in a sanitizer build, where the whole test would take minutes) without hooks and
# with its saved activations offloaded through the tensor store, each in its own process.
# Losses and every gradient must be bitwise identical, the peak RSS (VmHWM) lower with offload,
# the store's device bytes equal to the bytes offloaded in whole 4 KiB units, and only the
# partial units at each tensor's head and tail copied through staging (the rest moves straight
# from and into tensors); unpack's tensors come from recycled blocks.  The trace the hooks
# record then drives `llmio run --workload offload`.
# Skips (77) where /usr/bin/python3 has no torch (scripts/bootstrap.sh installs python3-torch).
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/torch_lib.sh
. "$(dirname "$0")/torch_lib.sh"
MODEL=$SRC/tests/torch_offload_model.py
# the two trainings that are compared run STEPS steps, the other policies SHORT (their steps
# are the same); a sanitizer build runs fewer: each step of torch there takes seconds
STEPS=10 SHORT=3
if ldd "$LLMIO_LIB" | grep -q 'libasan\|libubsan'; then
	STEPS=2 SHORT=2
fi
# glibc's malloc as users run it (no MALLOC_* variables): the hooks give the memory freed
# inside the heap back themselves (malloc_trim), and the peak-RSS check below holds without help
unset MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_ MALLOC_TOP_PAD_ MALLOC_ARENA_MAX

train() { # train NAME STEPS ARGS...: one process, its JSON in $T/NAME.json
	local name=$1 steps=$2; shift 2
	run timeout -k 5 240 "$PY" "$MODEL" --batch 4 --steps "$steps" --json "$T/$name.json" "$@"
	if [ "$RC" -ne 0 ]; then
		fail "train $name: exit $RC: $(tail -c 600 "$T/stderr")"
		return 1
	fi
	pass "train $name"
}

mkdir -p "$T/store"
train off "$STEPS" --mode off
# small bounds (2 MiB read ahead, 2 MiB in flight), far below the step's activations: the peak
# memory check below then does not depend on how far ahead the reads got in time
train all "$STEPS" --mode all --dir "$T/store" --trace "$T/trace.txt" --offload-loss 1 \
	--readahead 2097152 --inflight 2097152
train all-keeploss "$SHORT" --mode all --dir "$T/store"
train window "$SHORT" --mode window --dir "$T/store"
train keep "$SHORT" --mode keep
# without the model object (nor layers): the end of forward and backward's order are learned
train nomodel "$SHORT" --mode all --dir "$T/store" --no-model 1
# torch's own allocator (posix_memalign, whose freed tensors glibc 2.36 does not reuse): the
# hooks give the freed memory back themselves (malloc_trim), as in the run of all above
train torchalloc "$SHORT" --mode all --cpu-alloc 0 --dir "$T/store" --offload-loss 1 \
	--readahead 2097152 --inflight 2097152
# another allocator in glibc's place (tcmalloc, loaded first as users load it), torch's own
# allocator calling it: the hooks leave its memory to it (no malloc_trim).  Not in an ASan
# build, whose runtime is that allocator.
tcmalloc=$(ldconfig -p | awk '$1 == "libtcmalloc_minimal.so.4" && /x86-64|64bit/ {print $NF; exit}')
if ldd "$LLMIO_LIB" | grep -q libasan; then
	tcmalloc=
	note "ASan build: ASan's allocator is in glibc's place already; the tcmalloc case is the normal builds'"
elif [ -z "$tcmalloc" ]; then
	note "no libtcmalloc_minimal.so.4 (scripts/bootstrap.sh installs libtcmalloc-minimal4): the case of another allocator is not checked"
else
	LD_PRELOAD="$tcmalloc${LD_PRELOAD:+ $LD_PRELOAD}" train tcmalloc "$SHORT" --mode all --dir "$T/store" \
		--cpu-alloc 0
fi

cmp_py='
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
n = len(b["losses"])
ok = n >= int(sys.argv[3]) and a["losses"][:n] == b["losses"] and a["grads"][:n] == b["grads"]
print("losses %s / %s" % (a["losses"][-1], b["losses"][-1]))
sys.exit(0 if ok else 1)'
json_check "$T/off.json" "off trained $STEPS steps" "len(d['losses']) == $STEPS"
json_check "$T/all.json" "all trained $STEPS steps" "len(d['losses']) == $STEPS"
for m in all all-keeploss window keep nomodel torchalloc ${tcmalloc:+tcmalloc}; do
	check "$m: its losses and every gradient bitwise equal to no offload" \
		"$PY" -c "$cmp_py" "$T/off.json" "$T/$m.json" "$SHORT"
done

# what was offloaded reached the device, once per tensor (a tensor saved twice is written once)
json_check "$T/all.json" "all: bytes offloaded > 0 and every saved tensor read back" \
	'd["offloaded_bytes"] > 0 and d["store"]["bytes_put"] == d["offloaded_bytes"] and d["store"]["bytes_got"] == d["offloaded_bytes"]'
# in whole 4 KiB units: a tensor is placed at its address's offset in its page, so its bytes
# span the units of [address, address + bytes) (at most 8 KiB more than its bytes)
json_check "$T/all.json" "all: the store's device bytes written == bytes offloaded, in the 4 KiB units they span" \
	'd["store"]["device_bytes_written"] == d["unit_bytes"] and d["offloaded_bytes"] <= d["unit_bytes"] < d["offloaded_bytes"] + 8192 * d["offloaded"]'
json_check "$T/all.json" "all: device bytes read == bytes offloaded, in the 4 KiB units they span" \
	'd["store"]["device_bytes_read"] == d["unit_bytes"]'
# the loss's log-softmax output is saved twice (log_softmax, nll_loss): with the loss offloaded
# it is written once; by default it stays in memory (backward needs it first)
json_check "$T/all.json" "all, loss offloaded: a tensor saved twice was written once" 'd["dedup"] > 0'
json_check "$T/all-keeploss.json" "all: the tensors saved after the model's forward (the loss's) stayed in memory" \
	'd["dedup"] == 0 and 0 < d["offloaded_bytes"] < d["kept_bytes"] + d["offloaded_bytes"]'
# no copy but the edges: torch's tensors are 64-byte aligned; the store writes each from its
# own memory at a file offset congruent to its address, and unpack reads it back into a tensor
# at the same offset in its page, so only the partial 4 KiB units at a tensor's head and tail
# are staged (exactly edge_bytes each way, under 8 KiB a tensor), the rest moves directly
json_check "$T/all.json" "all: only the partial 4 KiB units at the tensors' edges staged, each way; the rest straight from and into tensors" \
	'd["store"]["staged_bytes"] == 2 * d["edge_bytes"] and d["store"]["direct_bytes"] == 2 * (d["offloaded_bytes"] - d["edge_bytes"]) and d["edge_bytes"] < 8192 * d["offloaded"]'
# every tensor unpack returned came from the pool, recycled once the first were freed
json_check "$T/all.json" "all: unpack's tensors from the pool, blocks recycled" \
	'd["pool_hits"] + d["pool_misses"] == d["offloaded"] and d["pool_hits"] > 0'
# a block no step asks for again (the loss's, offloaded in the first step of hooks without the
# model and kept in memory from the second on) must not hold the pool: newer blocks push it out
pool_py='
import gc, sys, torch
sys.path.insert(0, sys.argv[1])
import llmio_offload as lo
pool = lo._Pool(torch, 16 << 12)
big = pool.take((16 << 12,), torch.uint8, 16 << 12, 0)  # the whole cap
del big; gc.collect()
assert pool.free_bytes == 16 << 12, pool.free_bytes
for step in range(3):  # two 4-page tensors a step, freed at its end
    a = pool.take((4 << 12,), torch.uint8, 4 << 12, 0)
    b = pool.take((4 << 12,), torch.uint8, 4 << 12, 0)
    a.fill_(step); b.fill_(step + 1)
    assert int(a[0]) == step and int(b[-1]) == step + 1
    del a, b; gc.collect()
assert (pool.hits, pool.misses) == (4, 3), (pool.hits, pool.misses)  # the first 3 takes fresh
assert pool.free_bytes == 8 << 12, pool.free_bytes
print("pool ok")'
check "the pool: a block no longer asked for is pushed out by newer ones (hits from the second step)" \
	"$PY" -c "$pool_py" "$SRC/python"
# torch's CPU allocator while the hooks are active: libllmio_torch's malloc (src/torch), and torch's
# own again after them (tests/torch_cpu_alloc.py).  Built where torch's headers are.
torch_lib=$(dirname "$LLMIO_LIB")/libllmio_torch.so
have_alloc=1
if [ ! -e "$torch_lib" ]; then
	have_alloc=0
	if [ -e /usr/include/c10/core/CPUAllocator.h ]; then
		fail "no $torch_lib although torch's headers are installed (src/torch/CMakeLists.txt builds it)"
	else
		note "no torch headers (Debian: libtorch-dev, which scripts/bootstrap.sh installs): libllmio_torch.so is not built and its checks are skipped"
	fi
fi
asan=0
ldd "$LLMIO_LIB" | grep -q libasan && asan=1
if [ "$have_alloc" = 1 ]; then
	run "$PY" "$SRC/tests/torch_cpu_alloc.py" "$SRC/python" installed "$asan"
	desc="torch's CPU allocator: libllmio_torch's while the hooks are active (nested too), torch's after; 64-byte aligned; torch's error when malloc fails; a freed tensor's block reused by the next of its size"
	if [ "$RC" -eq 0 ]; then
		pass "$desc"
		note "$(grep -o 'reuse in 7:.*' "$T/stdout")"
	else
		fail "$desc: exit $RC: $(tail -c 800 "$T/stderr")"
	fi
	json_check "$T/all.json" "all: torch's tensors came from libllmio_torch while the hooks were active" \
		'd["cpu_alloc_off"] is None and d["cpu_alloc_served"] > 0'
	# with it the next tensors reuse what the written ones freed: no trim by default
	json_check "$T/all.json" "all: no malloc_trim (torch's tensors from libllmio_torch, which reuses freed blocks)" \
		'd["trims"] == 0 and "reuses freed blocks" in d["trim_off"]'
fi
check "no libllmio_torch.so: the hooks name the path and LLMIO_TORCH_LIB, and run with torch's allocator" \
	env LLMIO_TORCH_LIB=/nonexistent/libllmio_torch.so "$PY" "$SRC/tests/torch_cpu_alloc.py" "$SRC/python" missing
json_check "$T/all.json" "all: read ahead within its window, hook times reported" \
	'0 < d["peak_ahead_bytes"] <= 2 << 20 and d["wait_s"] <= d["unpack_s"]'
if [ "$(json_get "$T/all.json" 'd["store_page_cache"]')" = -1 ]; then
	note "no fincore: the store file's page cache is not checked"
else
	json_check "$T/all.json" "all: the store file holds < 5 % of a step's bytes in the page cache (O_DIRECT)" \
		"d['store_page_cache'] < 0.05 * d['offloaded_bytes'] / $STEPS"
fi
json_check "$T/window.json" "window: keeps the last block (offloads less than all)" \
	"0 < d['offloaded_bytes'] < $(json_get "$T/all.json" 'd["offloaded_bytes"]')"
json_check "$T/keep.json" "keep: nothing offloaded" 'd["offloaded_bytes"] == 0 and d["kept"] > 0'
# with torch's own, the hooks gave freed heap memory back while they offloaded (and not with
# nothing stored), where the malloc torch calls is glibc's: ASan's takes its place in an ASan build
if ldd "$LLMIO_LIB" | grep -q libasan; then
	json_check "$T/torchalloc.json" "torch's allocator, ASan's malloc: the hooks left its memory to it (no malloc_trim)" \
		'd["trims"] == 0 and "not glibc" in d["trim_off"]'
else
	json_check "$T/torchalloc.json" "torch's allocator: the hooks trimmed malloc's heap" \
		'd["trims"] > 0 and d["trim_off"] is None and d["cpu_alloc_off"] == "cpu_alloc=False"'
fi
if [ -n "$tcmalloc" ]; then
	json_check "$T/tcmalloc.json" "all, tcmalloc loaded first: no malloc_trim (the memory is tcmalloc's), every tensor read back" \
		'd["trims"] == 0 and "not glibc" in d["trim_off"] and d["store"]["bytes_got"] == d["offloaded_bytes"] > 0'
fi
json_check "$T/keep.json" "keep: no trim (nothing offloaded)" 'd["trims"] == 0 and "keep" in d["trim_off"]'
# only forward trims (backward's memory only falls, and the next forward reuses what it freed;
# each trim costs page faults later), and by
# default every quarter of the bytes a forward offloads, at least the in-flight bound (2 MiB)
json_check "$T/torchalloc.json" "torch's allocator: no trim during backward or end_step" 'sum(d["bwd_trims"]) == 0'
json_check "$T/torchalloc.json" "torch's allocator: the trim interval a quarter of a step's offloaded bytes (at least the in-flight bound)" \
	"d['trim_bytes'] == max(2 << 20, d['offloaded_bytes'] // $SHORT // 4)"
# no model: every step taught the next how many tensors forward saves (the read-ahead's start)
json_check "$T/nomodel.json" "no model: the saves of a forward learned, everything read back" 	'd["learned_saves"] > 0 and d["store"]["bytes_got"] == d["offloaded_bytes"] > 0'
json_check "$T/all.json" "model given: nothing learned" 'd["learned_saves"] is None'

# peak memory: the activations no longer all live at once.  Not under a sanitizer: ASan's
# allocator keeps its own free lists and shadow memory (an eighth of all it ever touched) in the
# RSS, which there hid the 25 MiB a step offloads; the normal builds check it.
off_hwm=$(json_get "$T/off.json" 'd["vmhwm"]')
if ldd "$LLMIO_LIB" | grep -q 'libasan\|libubsan'; then
	note "sanitizer build: the peak-RSS comparison is the normal builds' (ASan's allocator is in the RSS)"
else
	json_check "$T/all.json" "all: peak RSS below no offload ($((off_hwm >> 20)) MiB)" \
		"d['vmhwm'] < $off_hwm"
	json_check "$T/torchalloc.json" "torch's allocator, trimmed: peak RSS below no offload" \
		"d['vmhwm'] < $off_hwm"
fi
note "VmHWM off $((off_hwm >> 20)) MiB, all $(($(json_get "$T/all.json" 'd["vmhwm"]') >> 20)) MiB, offloaded/step $(($(json_get "$T/all.json" 'd["offloaded_bytes"]') / STEPS >> 20)) MiB"
no_store_files() { [ -z "$(ls -A "$T/store")" ]; }
check "the stores removed their files" no_store_files

# errors name the cause and the fix: a library that is not there, an unknown handle, a bad policy
err_py='
import errno, os, sys
sys.path.insert(0, sys.argv[1])
os.environ["LLMIO_LIB"] = "/nonexistent/libllmio.so"
import llmio_offload as lo
import llmio_store
try:
    lo.Store([sys.argv[2]])
    sys.exit("no error for a missing library")
except OSError as ex:
    assert "/nonexistent/libllmio.so" in str(ex) and "LLMIO_LIB" in str(ex), ex
llmio_store._lib = None  # the binding loads the library once
os.environ["LLMIO_LIB"] = sys.argv[3]
import ctypes
buf = ctypes.create_string_buffer(4096)
with lo.Store([sys.argv[2]], staging_bytes=4 << 20) as s:
    try:
        s.get(12345, ctypes.addressof(buf), 4096)
        sys.exit("no error for an unknown handle")
    except lo.StoreError as ex:
        assert ex.errno == errno.ENOENT and "llmio_store_get" in str(ex), ex
    try:
        lo.Offload(s, policy="sometimes")
        sys.exit("no error for an unknown policy")
    except ValueError as ex:
        assert "keep, all, window" in str(ex), ex
print("errors ok")'
check "python errors: missing library (names the path and LLMIO_LIB), unknown handle (ENOENT), bad policy" \
	"$PY" -c "$err_py" "$SRC/python" "$T/store" "$LLMIO_LIB"

# the trace drives the recipe: bytes per step = the trace's last step, exactly
if [ -s "$T/trace.txt" ]; then
	check "trace starts with its header" grep -qx '# llmio-offload-trace 1' "$T/trace.txt"
	want=$(awk '/^# step/ {s = 0; next} /^#/ {next} {s += $2} END {print s}' "$T/trace.txt")
	llmio run --workload offload --trace "$T/trace.txt" --steps 1 --fwd_ms 1 \
		--directory "$T/store" --json "$T/recipe.json" --quiet
	if [ "$RC" -eq 0 ]; then
		json_check "$T/recipe.json" "recipe from the trace writes and reads its bytes ($want)" \
			"d['runs'][0]['phases'][0]['metrics']['bytes_written'] == $want == d['runs'][0]['phases'][0]['metrics']['bytes_read']"
	else
		fail "recipe from the trace: exit $RC: $(head -c 400 "$T/stderr")"
	fi
else
	fail "no trace written by --trace"
fi
finish
