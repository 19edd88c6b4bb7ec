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
#  - mode=batch on a libcufile without the batch API is refused with the fix;
#  - issue 23, under the strict fakes (LLMIO_FAKE_STRICT=1): the CUDA 13 wheel layout under the
#    prefix of the python3 on PATH, mode=async refused without a cufile.json, one batch
#    submission at a time, a -1 from cuFile's threads reported as an I/O error (not end of
#    file), cuFileDriverClose called, `llmio engines` surviving a cuFile that crashes.
# bench/gpu_check.sh has its own test, cli_gpu_check.sh.

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
	-u LLMIO_FAKE_DRIVER_VERSION -u LLMIO_FAKE_CUFILE_OPEN_ERR -u CUFILE_ENV_PATH_JSON
	-u LLMIO_FAKE_IO_FAIL_AFTER -u LLMIO_FAKE_CUFILE_CRASH HOME="$T/home")
fake_rt=(LLMIO_CUDART="$FAKE/libcudart.so.12" LLMIO_FAKE_CUDA=1 LLMIO_FAKE_STRICT=1)

# engine_lines ENGINE ENV...: `llmio engines --brief` under ENV; the engine's lines -> $T/eng,
# joined into one (a long reason is wrapped at 100 columns)
engine_lines() {
	local e=$1; shift
	run "${base_env[@]}" "$@" "$LLMIO" engines --brief
	awk -v e="$e" '$1 == e { on = 1; print; next } on && /^ / { print; next } { on = 0 }' \
		"$T/stdout" | awk 'NR > 1 { printf " " } { sub(/^ +/, ""); printf "%s", $0 }
		END { print "" }' >"$T/eng"
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

	# issue 23.2: CUDA 13 wheels (site-packages/nvidia/cu13/lib) of the python3 on PATH
	py=$T/py
	mkdir -p "$py/bin" "$py/lib/python3.12/site-packages/nvidia/cu13/lib"
	printf '#!/bin/sh\nexit 0\n' >"$py/bin/python3"
	chmod +x "$py/bin/python3"
	cp "$FAKE/libcufile.so.0" "$py/lib/python3.12/site-packages/nvidia/cu13/lib/"
	mkdir -p "$T/home13"
	engine_lines gds "${fake_rt[@]}" PATH="$py/bin:$PATH" HOME="$T/home13"
	expect_eng "found in the CUDA 13 wheel of the python3 on PATH" "available" \
		"uses: $py/lib/python3.12/site-packages/nvidia/cu13/lib/libcufile.so.0"
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

echo "== llmio engines survives a cuFile that crashes while it opens (issue 23.5)"
run "${base_env[@]}" "${fake_cf[@]}" LLMIO_FAKE_CUFILE_CRASH=1 "$LLMIO" engines --brief
check "engines: exit 0 although cuFile crashed" test "$RC" -eq 0
awk '$1 == "gds" { on = 1; print; next } on && /^ / { print; next } { on = 0 }' \
	"$T/stdout" >"$T/eng"
expect_eng "engines: the crash is gds's reason" "unavailable" "probing it crashed (signal 6"
check "engines: the engines after gds are listed" grep -q '^cuda-bounce .*available' "$T/stdout"
check "engines: psync listed (output flushed before the probes)" grep -q '^psync ' "$T/stdout"

echo "== runs through the fake libraries"
F=$T/data
J=$T/out.json
printf '{ "execution": { "parallel_io": true, "max_io_queue_depth": 128 } }\n' >"$T/cufile.json"
fake_cf+=(CUFILE_ENV_PATH_JSON="$T/cufile.json")
gpu_run() { # gpu_run DESC ENV... -- ARGS...
	local desc=$1 envs=(); shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
	run "${base_env[@]}" "${envs[@]}" "$LLMIO" run --filename "$F" --size 2m --bs 64k \
		--json "$J" --quiet "$@"
	if [ "$RC" -ne 0 ]; then
		fail "$desc: exit $RC: $(head -c 400 "$T/stderr")"
		return 1
	fi
	if grep -qF "without cuFileDriverClose" "$T/stderr"; then
		fail "$desc: cuFile's driver left open at exit (issue 23.10)"
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
gpu_run "gds mode=batch at numjobs 2: one submission at a time" "${fake_cf[@]}" -- \
	--ioengine gds --mode=batch --rw randread --iodepth 16 --numjobs 2 --runtime 0.2 &&
	json_check "$J" "gds mode=batch numjobs 2: reads done" 'j["read"]["total_ios"] > 0'

# issue 23.3: the stream API is not used without cuFile's thread pool (a cufile.json)
run "${base_env[@]}" "${fake_rt[@]}" LLMIO_CUFILE="$FAKE/libcufile.so.0" "$LLMIO" run \
	--filename "$F" --size 2m --ioengine gds --mode=async --iodepth 4
check "mode=async without a cufile.json: exit 1" test "$RC" -eq 1
expect_err "mode=async without a cufile.json: why and the fix" "no cufile.json" \
	"CUFILE_ENV_PATH_JSON" "parallel_io"
printf '{ "execution": { "parallel_io": false } }\n' >"$T/cufile-nopar.json"
run "${base_env[@]}" "${fake_rt[@]}" LLMIO_CUFILE="$FAKE/libcufile.so.0" \
	CUFILE_ENV_PATH_JSON="$T/cufile-nopar.json" "$LLMIO" run --filename "$F" --size 2m \
	--ioengine gds --mode=async --iodepth 4
expect_err "mode=async with parallel_io off: said" "execution.parallel_io is off in $T/cufile-nopar.json"

# issue 23.8: a -1 from cuFile's own threads is an I/O error, not "0 bytes (end of file)"
for m in batch async; do
	run "${base_env[@]}" "${fake_cf[@]}" LLMIO_FAKE_IO_FAIL_AFTER=3 "$LLMIO" run \
		--filename "$F" --size 2m --bs 64k --ioengine gds --mode=$m --rw read --iodepth 4
	check "mode=$m: a failed I/O fails the run" test "$RC" -eq 1
	check "mode=$m: said as an I/O error" grep -qi "input/output error" "$T/stderr"
	check "mode=$m: not as end of file" test "$(grep -c "end of file" "$T/stderr")" -eq 0
done

gpu_run "cuda-bounce write (libaio)" "${fake_rt[@]}" -- --ioengine cuda-bounce --host=libaio \
	--rw write --iodepth 4 --direct=1 &&
	json_check "$J" "cuda-bounce: copy time separate from storage time" \
		'"32 device-to-host" in j["engine_notes"] and "storage" in j["engine_notes"] and "host engine libaio" in j["engine_notes"]'
# issue 23.9: O_DIRECT from pinned memory CUDA aligns to 256 bytes only (strict fake)
gpu_run "cuda-bounce O_DIRECT read, sched=spin" "${fake_rt[@]}" -- --ioengine cuda-bounce \
	--rw read --iodepth 4 --direct=1 --sched=spin &&
	json_check "$J" "cuda-bounce: page-aligned pinned memory, sched said" \
		'j["read"]["io_bytes"] == 2*1024*1024 and "page-aligned" in j["engine_notes"] and "sched=spin" in j["engine_notes"]'
gpu_run "cuda-bounce read (io_uring) on GPU 0" "${fake_rt[@]}" -- --ioengine cuda-bounce \
	--rw read --iodepth 2 --gpu=0 &&
	json_check "$J" "cuda-bounce: reads copied host-to-device, overlapping" \
		'j["read"]["io_bytes"] == 2*1024*1024 and "32 host-to-device" in j["engine_notes"] and "overlapping storage" in j["engine_notes"]'

# An engine that answers "busy" (gds mode=batch takes one batch at a time) must not cost a
# block: the I/O it refused is queued first next time.  The witness is the per-I/O log's
# offsets (fio's log_offset column): a sequential read of 32 blocks reads each exactly once.
if gpu_run "gds mode=batch sequential read, per-I/O log" "${fake_cf[@]}" -- --ioengine gds \
	--mode=batch --rw read --iodepth 4 --write_lat_log="$T/busy" --log_offset=1; then
	offs=$(awk -F, '{ print $5 + 0 }' "$T/busy_clat.1.log" | sort -n | uniq -c |
		awk '$1 != 1 { bad++ } END { print NR, bad + 0 }')
	check "busy engine: 32 offsets, each read once ($offs: offsets, read other than once)" \
		[ "$offs" = "32 0" ]
fi

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

finish
