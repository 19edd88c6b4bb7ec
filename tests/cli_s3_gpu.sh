#!/usr/bin/env bash
# Objects into GPU memory (issue 19): cuda-bounce with host=s3 reads objects from a real S3
# server (s3rver or fauxqs, on loopback) into pinned host buffers and copies them to GPU memory
# asynchronously; writes copy GPU memory back and upload it.  Under the strict fake CUDA
# libraries (LLMIO_FAKE_STRICT=1: host memory stands in for the GPU's, every CUDA rule
# enforced).  Exact bytes: an object written from GPU memory holds what cuda-bounce writes to a
# file from the same GPU buffers.  The result carries the wire figures and the host CPU per GB.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3_server.sh"

FAKE=$(cd "$(dirname "$LLMIO")/tests/fake_cuda" 2>/dev/null && pwd) ||
	skip_all "no fake CUDA libraries next to $LLMIO (tests/fake_cuda)"
[ -f "$FAKE/libcudart.so.12" ] || skip_all "fake CUDA libraries are not built in $FAKE"
unset LLMIO_CUFILE CUDA_HOME CUDA_PATH LLMIO_FAKE_CUDART_VERSION LLMIO_FAKE_DRIVER_VERSION
export LLMIO_CUDART=$FAKE/libcudart.so.12 LLMIO_FAKE_CUDA=1 LLMIO_FAKE_STRICT=1

on_exit() { s3_stop; }
s3_start llmio

# --- write: GPU memory -> pinned buffer -> multipart upload ----------------------------------
expect_rc 0 "cuda-bounce host=s3 writes an object from GPU memory (multipart, 2 parts)" run \
	--engine cuda-bounce --host=s3 --filename s3://llmio/gpu/w --rw write --bs 5m --size 10m \
	--iodepth 2 --json "$T/w.json"
json_check "$T/w.json" "10 MiB written, each part copied device-to-host first" \
	'j["write"]["io_bytes"] == 10485760 and "2 device-to-host" in j["engine_notes"]'
json_check "$T/w.json" "the s3 host engine's wire figures are the result's: initiate + 2 parts + complete" \
	'j["wire"]["known"] and j["wire"]["requests"] == 4 and 10485760 < j["wire"]["tx_bytes"] < 10485760 + 8192'
json_check "$T/w.json" "the notes name the host engine and the endpoint" \
	'"host engine s3 (s3: http://127.0.0.1" in j["engine_notes"]'
expect_rc 0 "the same GPU buffers written to a file (host=psync)" run --engine cuda-bounce \
	--host=psync --filename "$T/ref" --rw write --bs 5m --size 10m --iodepth 2
s3_curl -o "$T/got" "$S3_URL/llmio/gpu/w"
check "the object's bytes are exactly the file's" cmp -s "$T/got" "$T/ref"

# --- read: Range GETs into pinned buffers, then host-to-device copies -------------------------
expect_rc 0 "cuda-bounce host=s3 reads the object into GPU memory" run --engine cuda-bounce \
	--host=s3 --filename s3://llmio/gpu/w --rw read --bs 1m --iodepth 4 --json "$T/r.json"
json_check "$T/r.json" "10 MiB read in 10 Range GETs, 10 host-to-device copies" \
	'j["read"]["io_bytes"] == 10485760 and j["wire"]["requests"] == 10 and "10 host-to-device" in j["engine_notes"]'
json_check "$T/r.json" "the bodies and their headers on the wire" \
	'10485760 < j["wire"]["rx_bytes"] < 10485760 + 16384'
json_check "$T/r.json" "the CPU split: process threads with the engine's copies among them" \
	'j["cpu"]["proc_s"] > 0 and j["wire"]["copy_s"] > 0'
check "the text reports the host CPU per GB of the object path" \
	grep -qE '^  host CPU [0-9.]+ CPU-s per GB moved' "$T/stdout"
expect_rc 0 "a prefix of objects (list) into GPU memory" run --engine cuda-bounce --host=s3 \
	--directory s3://llmio/gpu --rw read --bs 5m --iodepth 2 --json "$T/l.json"
json_check "$T/l.json" "...the listed object, whole" 'j["read"]["io_bytes"] == 10485760'

# --- errors are the s3 engine's, one line each -----------------------------------------------
expect_rc 1 "a missing object: one line" run --engine cuda-bounce --host=s3 \
	--filename s3://llmio/gpu/nope --rw read --bs 1m
expect_err "...naming HTTP 404 and the fix" "HTTP 404" "write it first"
expect_rc 2 "O_DIRECT does not apply to objects" run --engine cuda-bounce --host=s3 \
	--filename s3://llmio/gpu/w --rw read --bs 1m --direct=1
expect_err "...saying so" "no local file I/O" "--direct=0"
expect_rc 1 "an upload cut short from GPU memory fails the job (the host engine's finish)" run \
	--engine cuda-bounce --host=s3 --filename s3://llmio/gpu/cut --rw write --bs 5m --size 20m \
	--io_size 10m
expect_err "...with the s3 engine's line" "s3://llmio/gpu/cut: the job ended with 2 of the 4" \
	"not written"
check "...and the object is not there" test "$(obj_list gpu/cut)" = "0 0"
expect_rc 2 "the file hosts still refuse an s3:// URL" run --engine cuda-bounce \
	--filename s3://llmio/gpu/w --rw read --bs 1m
s3_stop
finish
