#!/bin/bash
# shellcheck disable=SC2317 # helpers run from the trap or via check
# cli_gpu.sh: the run-time loading of the CUDA runtime and cuFile, and what `llmio engines`
# says about the GPU engines, with the fake libraries the build puts in tests/fake_cuda (host
# memory stands in for GPU memory):
#  - search order: LLMIO_CUFILE beats the dynamic linker path, which beats $CUDA_HOME, which
#    beats the Python wheels (~/.local/lib/python3*/site-packages/nvidia/cufile/lib);
#  - the exact reasons: no library (and where we looked), a library without a symbol, a runtime
#    too old, no driver, no GPU, an override that does not load, cuFileDriverOpen failing;
#  - whole runs of gds (each mode) and cuda-bounce from the CLI, with the notes that say compat
#    mode and the copy time;
#  - mode=batch on a libcufile without the batch API is refused with the fix.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

FAKE=$(cd "$(dirname "$LLMIO")/tests/fake_cuda" 2>/dev/null && pwd) ||
	skip_all "no fake CUDA libraries next to $LLMIO (tests/fake_cuda)"
[ -f "$FAKE/libcudart.so.12" ] && [ -f "$FAKE/libcufile.so.0" ] ||
	skip_all "fake CUDA libraries are not built in $FAKE"

# A clean environment: nothing of the caller's CUDA setup leaks in; HOME is empty.
mkdir -p "$T/home"
base_env=(env -u LLMIO_CUDART -u LLMIO_CUFILE -u CUDA_HOME -u CUDA_PATH -u VIRTUAL_ENV
	-u CONDA_PREFIX -u LD_LIBRARY_PATH -u LLMIO_FAKE_CUDART_VERSION
	-u LLMIO_FAKE_DRIVER_VERSION -u LLMIO_FAKE_CUFILE_OPEN_ERR HOME="$T/home")
fake_rt=(LLMIO_CUDART="$FAKE/libcudart.so.12" LLMIO_FAKE_CUDA=1)

# engine_lines ENGINE ENV...: `llmio engines --brief` under ENV; the engine's lines -> $T/eng
engine_lines() {
	local e=$1; shift
	run "${base_env[@]}" "$@" "$LLMIO" engines --brief
	awk -v e="$e" '$1 == e { on = 1; print; next } on && /^ / { print; next } { on = 0 }' \
		"$T/stdout" >"$T/eng"
}

# expect_eng DESC TEXT...: the engine's lines contain every TEXT
expect_eng() {
	local desc=$1 s; shift
	for s in "$@"; do
		if ! grep -qF -- "$s" "$T/eng"; then
			fail "$desc: lacks '$s': $(cat "$T/eng")"
			return 1
		fi
	done
	pass "$desc"
}

echo "== the CUDA runtime"
engine_lines cuda-bounce LLMIO_FAKE_CUDA=1
if grep -qF "libcudart (the CUDA runtime) not found" "$T/eng"; then
	expect_eng "no libcudart: where we looked and what to install" "unavailable" \
		"LLMIO_CUDART (unset)" "/usr/local/cuda" "nvidia/cuda_runtime/lib" \
		"pip install nvidia-cuda-runtime-cu12"
else
	note "a real libcudart is reachable here ($(grep -o 'runtime [^ ]*' "$T/eng" | head -1)): the 'not found' message is not checked"
fi

engine_lines cuda-bounce "${fake_rt[@]}"
expect_eng "override: the fake runtime is used" "available" "uses: $FAKE/libcudart.so.12" \
	"CUDA runtime 12.4, driver 12.4, 1 GPU"

engine_lines cuda-bounce LLMIO_CUDART="$T/nope/libcudart.so.12"
expect_eng "override that does not load is reported, not bypassed" "unavailable" \
	"LLMIO_CUDART=$T/nope/libcudart.so.12 does not load"

engine_lines cuda-bounce LLMIO_CUDART="$FAKE/nosym/libcudart.so.12" LLMIO_FAKE_CUDA=1
expect_eng "missing symbol named with the library's path" \
	"$FAKE/nosym/libcudart.so.12 has no symbol cudaMemcpyAsync"

engine_lines cuda-bounce "${fake_rt[@]}" LLMIO_FAKE_CUDART_VERSION=10020
expect_eng "runtime too old" "is CUDA runtime 10.2, older than 11.4" "nvidia-cuda-runtime-cu12"

engine_lines cuda-bounce "${fake_rt[@]}" LLMIO_FAKE_DRIVER_VERSION=0
expect_eng "no driver" "no NVIDIA driver is installed"

engine_lines cuda-bounce LLMIO_CUDART="$FAKE/libcudart.so.12" LLMIO_FAKE_CUDA=0
expect_eng "no GPU: the CUDA error string" "no GPU: cudaGetDeviceCount" \
	"no CUDA-capable device is detected" "CUDA_VISIBLE_DEVICES"

echo "== cuFile: reasons and search order"
engine_lines gds "${fake_rt[@]}"
if grep -qF "libcufile (cuFile) not found" "$T/eng"; then
	expect_eng "no libcufile: where we looked and what to install" "LLMIO_CUFILE (unset)" \
		"nvidia/cufile/lib" "pip install nvidia-cufile-cu12"

	mkdir -p "$T/ld" "$T/cuda/lib64" "$T/home/.local/lib/python3.11/site-packages/nvidia/cufile/lib"
	for d in "$T/ld" "$T/cuda/lib64" "$T/home/.local/lib/python3.11/site-packages/nvidia/cufile/lib"; do
		cp "$FAKE/libcufile.so.0" "$d/"
	done
	wheel=$T/home/.local/lib/python3.11/site-packages/nvidia/cufile/lib/libcufile.so.0
	engine_lines gds "${fake_rt[@]}"
	expect_eng "found in the Python wheel under ~/.local" "available" "uses: $wheel"
	engine_lines gds "${fake_rt[@]}" CUDA_HOME="$T/cuda"
	expect_eng "\$CUDA_HOME beats the wheel" "uses: $T/cuda/lib64/libcufile.so.0"
	engine_lines gds "${fake_rt[@]}" CUDA_HOME="$T/cuda" LD_LIBRARY_PATH="$T/ld"
	expect_eng "the dynamic linker path beats \$CUDA_HOME" "uses: $T/ld/libcufile.so.0"
	engine_lines gds "${fake_rt[@]}" CUDA_HOME="$T/cuda" LD_LIBRARY_PATH="$T/ld" \
		LLMIO_CUFILE="$FAKE/libcufile.so.0"
	expect_eng "LLMIO_CUFILE beats everything" "uses: $FAKE/libcufile.so.0"
else
	note "a real libcufile is reachable here: search-order checks skipped ($(cat "$T/eng"))"
fi

fake_cf=("${fake_rt[@]}" LLMIO_CUFILE="$FAKE/libcufile.so.0")
engine_lines gds "${fake_cf[@]}"
expect_eng "gds available: compat mode and APIs said" "available" "batch API" "stream API" \
	"compat (POSIX) mode" "nvidia-fs kernel module is not loaded"

engine_lines gds "${fake_cf[@]}" LLMIO_FAKE_CUFILE_OPEN_ERR=5010
expect_eng "cuFileDriverOpen failure named" "unavailable" \
	"cuFileDriverOpen ($FAKE/libcufile.so.0) failed: CU_FILE_NVFS_DRIVER_ERROR (cuFile error 5010)" \
	"allow_compat_mode"

engine_lines gds LLMIO_CUFILE="$FAKE/libcufile.so.0"
expect_eng "gds without the CUDA runtime says so" "unavailable"

echo "== runs through the fake libraries"
F=$T/data
J=$T/out.json
gpu_run() { # gpu_run DESC ENV... -- ARGS...
	local desc=$1 envs=(); shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
	run "${base_env[@]}" "${envs[@]}" "$LLMIO" run --filename "$F" --size 2m --bs 64k \
		--json "$J" --quiet "$@"
	if [ "$RC" -ne 0 ]; then
		fail "$desc: exit $RC: $(head -c 400 "$T/stderr")"
		return 1
	fi
	pass "$desc"
}
for m in sync batch async; do
	gpu_run "gds mode=$m write" "${fake_cf[@]}" -- --ioengine gds --mode=$m --rw write \
		--iodepth 4 --direct=1 --end_fsync=1 &&
		json_check "$J" "gds mode=$m: all written, notes say the mode" \
			'j["write"]["io_bytes"] == 2*1024*1024 and "compat (POSIX) mode" in j["engine_notes"]'
	gpu_run "gds mode=$m randread" "${fake_cf[@]}" -- --ioengine gds --mode=$m --rw randread \
		--iodepth 8 --register=1 --runtime 0.2 &&
		json_check "$J" "gds mode=$m: reads done, buffers registered" \
			'j["read"]["total_ios"] > 0 and "8 buffers registered" in j["engine_notes"]'
done
gpu_run "cuda-bounce write (libaio)" "${fake_rt[@]}" -- --ioengine cuda-bounce --host=libaio \
	--rw write --iodepth 4 --direct=1 &&
	json_check "$J" "cuda-bounce: copy time separate from storage time" \
		'"32 device-to-host" in j["engine_notes"] and "storage" in j["engine_notes"] and "host engine libaio" in j["engine_notes"]'
gpu_run "cuda-bounce read (io_uring) on GPU 0" "${fake_rt[@]}" -- --ioengine cuda-bounce \
	--rw read --iodepth 2 --gpu=0 &&
	json_check "$J" "cuda-bounce: reads copied host-to-device, overlapping" \
		'j["read"]["io_bytes"] == 2*1024*1024 and "32 host-to-device" in j["engine_notes"] and "overlapping storage" in j["engine_notes"]'

run "${base_env[@]}" "${fake_cf[@]}" "$LLMIO" run --filename "$F" --size 2m --ioengine gds --gpu=3
check "gpu=3 on a 1-GPU machine: exit 1" test "$RC" -eq 1
expect_err "gpu=3: names the GPUs there are" "gpu=3: this machine has 1 GPU (0..0)"

run "${base_env[@]}" "${fake_rt[@]}" LLMIO_CUFILE="$FAKE/nobatch/libcufile.so.0" "$LLMIO" run \
	--filename "$F" --size 2m --ioengine gds --mode=batch --iodepth 4
check "mode=batch without the batch API: exit 1" test "$RC" -eq 1
expect_err "mode=batch without the batch API: the fix" "has no usable batch API" "use mode=sync"
gpu_run "mode=auto without batch/stream API falls back to sync" "${fake_rt[@]}" \
	LLMIO_CUFILE="$FAKE/nobatch/libcufile.so.0" -- --ioengine gds --rw read --iodepth 4 &&
	json_check "$J" "auto -> sync is said" '"sync cuFileRead/cuFileWrite" in j["engine_notes"]'

echo "== bench/gpu_check.sh: syntax, and a dry run of all of it on the fake libraries"
GC=$(dirname "$0")/../bench/gpu_check.sh
check "gpu_check.sh parses (bash -n)" bash -n "$GC"
run env OUT="$T/gc" bash "$GC" --llmio "$LLMIO" --fake --size 4m --runtime 0.1 --ramp 0 \
	--dir "$T/gcdir"
check "gpu_check.sh --fake: exit 0" test "$RC" -eq 0
check "gpu_check.sh: 18 runs summarised (3 engines x 6 patterns)" \
	test "$(grep -cE '^(gds|cuda-bounce|io_uring)-' "$T/gc/summary.txt" 2>/dev/null)" -eq 18
check "gpu_check.sh: facts say the cuFile mode" grep -q '^cuFile mode: compat' "$T/gc/facts.txt"
check "gpu_check.sh: conformance ran" grep -q 'PASSED' "$T/gc/conformance.txt"
check "gpu_check.sh: scratch file removed" test ! -e "$T/gcdir/llmio-gpu-check"

finish
