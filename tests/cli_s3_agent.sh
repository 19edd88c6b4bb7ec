#!/usr/bin/env bash
# s3-agent, the off-host client stand-in (issue 19): the s3 client in a separate agent process
# pinned to its own CPU, the data in shared memory.  Against an S3 server on loopback (tests/s3_server.sh): exact bytes of
# a multipart upload from the shared buffers, a read with the same wire figures as the s3
# engine's, the application's CPU and the agent's reported apart (and within what one pinned
# CPU can give), the output saying plainly that it is a stand-in, errors as one line.
# (tests/test_s3_agent.c checks the bytes a read lands, and an agent killed mid-run.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3_server.sh"

on_exit() { s3_stop; }
s3_start llmio
LAST_CPU=$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')

expect_rc 0 "a multipart upload through the agent" run --engine s3-agent \
	--filename s3://llmio/ag/w --rw write --bs 5m --size 10m --iodepth 2 --json "$T/w.json"
json_check "$T/w.json" "10 MiB in initiate + 2 parts + complete" \
	'j["write"]["io_bytes"] == 10485760 and j["wire"]["requests"] == 4'
json_check "$T/w.json" "the agent's CPU is reported apart from the application's" \
	'j["wire"]["agent_s"] > 0 and j["cpu"]["proc_s"] >= 0'
s3_curl -o "$T/got" "$S3_URL/llmio/ag/w"
check "the object holds 10 MiB" test "$(stat -c %s "$T/got")" = 10485760
expect_rc 0 "verify on a write through the agent reads each block back" run --engine \
	s3-agent --filename s3://llmio/ag/ver --rw write --bs 5m --size 10m --verify crc32c
expect_rc 0 "...and a read with verify checks each block in the shared buffers" run --engine \
	s3-agent --filename s3://llmio/ag/ver --rw read --bs 5m --verify crc32c
expect_rc 1 "verify through the agent finds an object not written with it" run --engine \
	s3-agent --filename s3://llmio/ag/w --rw read --bs 5m --verify crc32c
expect_err "...naming it" "verify: s3://llmio/ag/w at offset 0"
expect_rc 1 "an upload cut short by io_size fails the job through the agent too" run \
	--engine s3-agent --filename s3://llmio/ag/cut --rw write --bs 5m --size 20m --io_size 10m
expect_err "...with the s3 engine's line" "s3://llmio/ag/cut: the job ended with 2 of the 4" \
	"not written"
check "...and the object is not there" test "$(obj_list ag/cut)" = "0 0"
# the agent's buffers are host memory: the worker stamps its writes there as for the s3 engine's
expect_rc 0 "the same write in-process" run --engine s3 --filename s3://llmio/ag/ref \
	--rw write --bs 5m --size 10m --iodepth 2
s3_curl -o "$T/ref" "$S3_URL/llmio/ag/ref"
check "the object's bytes are exactly the s3 engine's" cmp -s "$T/got" "$T/ref"

expect_rc 0 "a read through the agent" run --engine s3-agent --filename s3://llmio/ag/w \
	--rw read --bs 1m --iodepth 4 --json "$T/r.json"
expect_out "the text says it plainly, with both CPU figures per GB" \
	"off-host client STAND-IN" "agent process" "moved by the application" "by the agent"
expect_rc 0 "the same read with the s3 engine in-process" run --engine s3 \
	--filename s3://llmio/ag/w --rw read --bs 1m --iodepth 4 --json "$T/s.json"
python3 - "$T/r.json" "$T/s.json" >"$T/cmp" <<'EOF'
import json, sys
a, s = (json.load(open(p))["jobs"][0] for p in sys.argv[1:3])
ok = (a["read"]["io_bytes"] == s["read"]["io_bytes"] == 10485760
      and a["wire"]["requests"] == s["wire"]["requests"] == 10
      and a["wire"]["rx_bytes"] == s["wire"]["rx_bytes"])
print("same" if ok else "differ: %r %r" % (a["wire"], s["wire"]))
EOF
check "agent and in-process: the same bytes and requests on the wire ($(cat "$T/cmp"))" \
	test "$(cat "$T/cmp")" = same
json_check "$T/r.json" "the CPU split is sane: the agent used CPU, at most one CPU's worth" \
	'0 < j["wire"]["agent_s"] <= j["job_runtime"] / 1000 + 1.0 and j["cpu"]["proc_s"] >= 0'
json_check "$T/s.json" "an in-process client has no agent CPU" 'j["wire"]["agent_s"] == 0'
json_check "$T/r.json" "the notes say stand-in, and the agent's CPU" \
	'"STAND-IN (for a DPU" in j["engine_notes"] and "on CPU '"$LAST_CPU"'" in j["engine_notes"]'

expect_rc 0 "agent_cpu picks the agent's CPU" run --engine s3-agent \
	--filename s3://llmio/ag/w --rw read --bs 1m --agent_cpu=0 --json "$T/c0.json"
json_check "$T/c0.json" "...named in the notes" '"on CPU 0" in j["engine_notes"]'
expect_rc 2 "a CPU the job may not use: one line" run --engine s3-agent \
	--filename s3://llmio/ag/w --rw read --bs 1m --agent_cpu=1000
expect_err "...saying which" "agent_cpu=1000 is not a CPU this thread may use"
expect_rc 1 "a missing key: the s3 engine's line" run --engine s3-agent \
	--filename s3://llmio/ag/nope --rw read --bs 1m
expect_err "...HTTP 404 and the fix" "HTTP 404" "write it first"
s3_stop
finish
