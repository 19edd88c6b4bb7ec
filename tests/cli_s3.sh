#!/usr/bin/env bash
# The s3 engine against a real S3 server (s3rver or fauxqs, tests/s3_server.sh, started here on
# loopback) and a tiny fault server: PUT, multipart, GET, Range, HEAD, list, delete with exact
# byte counts and content, verify, and every error a user meets (403, 404 bucket / key, server
# killed mid-run, 503 SlowDown retried, short reads, a write that did not land), each one clear
# line with the results kept; every request llmio sends signed again by botocore.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3_server.sh"

FAULT_PID=
TLS_PID=
on_exit() {
	s3_stop
	[ -n "$FAULT_PID" ] && kill "$FAULT_PID" 2>/dev/null
	[ -n "$TLS_PID" ] && kill "$TLS_PID" 2>/dev/null
}
s3_start llmio


# --- PUT: one object, one request; its bytes are what llmio writes to a file -----------------
expect_rc 0 "PUT of a 1 MiB object" run --engine s3 --filename s3://llmio/one --rw write \
	--bs 1m --size 1m --json "$T/put.json"
json_check "$T/put.json" "PUT wrote exactly 1 MiB" 'j["write"]["io_bytes"] == 1048576'
json_check "$T/put.json" "PUT took one request" 'j["wire"]["requests"] == 1'
s3_curl -o "$T/one.got" "$S3_URL/llmio/one"
check "the object holds 1 MiB" test "$(stat -c %s "$T/one.got")" = 1048576
expect_rc 0 "the same write to a file" run --engine psync --filename "$T/one.ref" --rw write \
	--bs 1m --size 1m --json "$T/one.json"
check "the object's bytes are the file's" cmp -s "$T/one.got" "$T/one.ref"

# --- multipart: parts are the job's writes, 5 MiB each --------------------------------------
expect_rc 0 "multipart upload of 15 MiB in 5 MiB parts" run --engine s3 --filename \
	s3://llmio/dir/big --rw write --bs 5m --size 15m --json "$T/mp.json"
json_check "$T/mp.json" "multipart wrote exactly 15 MiB" 'j["write"]["io_bytes"] == 15728640'
json_check "$T/mp.json" "initiate + 3 parts + complete" 'j["wire"]["requests"] == 5'
s3_curl -o "$T/big.got" "$S3_URL/llmio/dir/big"
expect_rc 0 "the same write to a file" run --engine psync --filename "$T/big.ref" --rw write \
	--bs 5m --size 15m
check "the multipart object's bytes are the file's" cmp -s "$T/big.got" "$T/big.ref"
expect_rc 0 "multipart with 3 parts in flight" run --engine s3 --filename s3://llmio/dir/big2 \
	--rw write --bs 5m --size 15m --iodepth 3
s3_curl -o "$T/big2.got" "$S3_URL/llmio/dir/big2"
check "concurrent parts: 15 MiB object" test "$(stat -c %s "$T/big2.got")" = 15728640
# verify: a write reads every block back through the engine (no file to pread), a read checks
# each block it reads
expect_rc 0 "verify on a multipart write reads each block back" run --engine s3 --filename \
	s3://llmio/ver --rw write --bs 5m --size 10m --iodepth 2 --verify crc32c
expect_rc 0 "...and a read with verify checks each block" run --engine s3 --filename \
	s3://llmio/ver --rw read --bs 5m --iodepth 2 --verify crc32c --json "$T/ver.json"
json_check "$T/ver.json" "...all of them" 'j["read"]["io_bytes"] == 10485760'
expect_rc 2 "verify with cleanup=1 is refused up front (it would delete before the read-back)" \
	run --engine s3 --filename s3://llmio/verc --rw write --bs 5m --size 10m --verify crc32c \
	--cleanup=1
expect_err "...saying which to drop" "cleanup=1 deletes it then" "drop cleanup=1"
expect_rc 1 "verify finds an object not written with it" run --engine s3 --filename \
	s3://llmio/dir/big --rw read --bs 5m --verify crc32c
expect_err "...naming the object and the offset" "verify: s3://llmio/dir/big at offset 0"

# a write that did not land is never a success: a size bs does not divide is refused up front
# (the job writes whole blocks), an upload cut short is aborted and fails the job
expect_rc 2 "a size that is not a multiple of bs is refused up front" run --engine s3 \
	--filename s3://llmio/x23 --rw write --bs 5m --size 23m
expect_err "...saying why and the sizes to use" "not a multiple of bs=5242880" \
	"last 3145728 bytes would never be sent" "use --size 20971520 or 26214400"
expect_rc 1 "an upload cut short by io_size fails the job" run --engine s3 \
	--filename s3://llmio/cut --rw write --bs 5m --size 20m --io_size 10m --json "$T/cut.json"
expect_err "...with one line saying the object was not written" \
	"s3://llmio/cut: the job ended with 2 of the 4 parts" "aborted" "not written"
json_check "$T/cut.json" "...in the result too" '"not written" in j["error_msg"]'
check "...and the object is not there" test "$(obj_list cut)" = "0 0"
s3_curl "$S3_URL/llmio?uploads" >"$T/uploads"
if grep -q ListMultipartUploadsResult "$T/uploads"; then
	check "...nor an upload left open" test "$(grep -c '<UploadId>' "$T/uploads")" = 0
else
	note "this server does not list multipart uploads: the open-upload check is skipped"
fi
expect_rc 2 "parts below 5 MiB are refused up front" run --engine s3 --filename \
	s3://llmio/small-parts --rw write --bs 1m --size 3m
expect_err "...saying the fix" "below S3's 5 MiB part minimum" "bs=5m"

# --- GET / Range / HEAD ----------------------------------------------------------------------
head -c 3000000 /dev/urandom >"$T/odd"
s3_curl -T "$T/odd" "$S3_URL/llmio/odd"
expect_rc 0 "sequential GET, size from HEAD" run --engine s3 --filename s3://llmio/odd \
	--rw read --bs 1m --iodepth 4 --json "$T/get.json"
json_check "$T/get.json" "HEAD gave 3000000 bytes: 2 whole 1 MiB blocks read" \
	'j["read"]["io_bytes"] == 2097152 and j["target_bytes"] == 3000000'
json_check "$T/get.json" "bytes on the wire from curl: the bodies plus headers, 2 requests" \
	'j["wire"]["known"] and 2097152 < j["wire"]["rx_bytes"] < 2097152 + 4096 and j["wire"]["requests"] == 2'
json_check "$T/get.json" "the CPU split: threads, system-wide softirq, copies apart" \
	'j["cpu"]["softirq_system_s"] >= 0 and j["wire"]["copy_s"] > 0 and j["wire"]["hash_s"] == 0'
json_check "$T/put.json" "a write counts its body sent" \
	'1048576 < j["wire"]["tx_bytes"] < 1048576 + 4096'
json_check "$T/one.json" "a file engine has no wire figures" 'not j["wire"]["known"]' 
head -c 3000 /dev/urandom >"$T/small"
s3_curl -T "$T/small" "$S3_URL/llmio/small"
expect_rc 2 "an object smaller than bs: one line with its size" run --engine s3 --filename \
	s3://llmio/small --rw read --bs 1m
expect_err "...and the fix" "s3://llmio/small is 3000 bytes, smaller than bs=1048576" "lower --bs"
expect_rc 0 "random 64k Range GETs" run --engine s3 --filename s3://llmio/dir/big \
	--rw randread --bs 64k --iodepth 8 --io_size 4m --json "$T/rr.json"
json_check "$T/rr.json" "4 MiB read in 64 ranges" \
	'j["read"]["io_bytes"] == 4194304 and j["read"]["total_ios"] == 64'
expect_rc 1 "a missing key is one line" run --engine s3 --filename s3://llmio/nope --rw read \
	--bs 4k
expect_err "...naming HTTP 404 and the fix" "s3://llmio/nope" "HTTP 404" "write it first"
expect_rc 1 "a missing bucket is one line" run --engine s3 --filename s3://nobucket/x \
	--rw read --bs 4k
expect_err "...naming the bucket" "bucket nobucket does not exist"
expect_rc 1 "a multipart upload into a missing bucket is one line" run --engine s3 \
	--filename s3://nobucket/mp --rw write --bs 5m --size 10m
expect_err "...with the HTTP status, not an errno" "starting the multipart upload" "HTTP 404" \
	"NoSuchBucket"
check "...and no 'HTTP -N'" test "$(grep -c 'HTTP -' "$T/stderr")" = 0

# --- list, delete ----------------------------------------------------------------------------
expect_rc 0 "--directory writes llmio.0..2 under the prefix" run --engine s3 --directory \
	s3://llmio/set --nrfiles 3 --rw write --bs 1m --size 3m
s3_curl -T "$T/odd" "$S3_URL/llmio/set/user-object"
head -c 1048576 /dev/urandom >"$T/amp"
s3_curl -T "$T/amp" "$S3_URL/llmio/set/a%26b"
expect_rc 0 "--directory reads every listed object" run --engine s3 --directory s3://llmio/set \
	--rw read --bs 1m --json "$T/list.json"
json_check "$T/list.json" "3 x 1 MiB + the user's 3000000 bytes and 1 MiB 'a&b' listed" \
	'j["target_bytes"] == 4 * 1048576 + 3000000 and j["read"]["io_bytes"] == 6 * 1048576'
expect_rc 0 "two threads read the listed objects, each its own slice" run --engine s3 \
	--directory s3://llmio/set --rw read --bs 1m --numjobs 2 --iodepth 2 --json "$T/nj.json"
json_check "$T/nj.json" "...6 MiB in 6 requests between them" \
	'j["read"]["io_bytes"] == 6 * 1048576 and j["wire"]["requests"] == 6'
# two threads writing objects: each its own (ckpt's ranks); tests/cli_s3_recipes.sh has more
expect_rc 0 "two threads write two objects, each its own" run --engine s3 \
	--directory s3://llmio/nj --nrfiles 2 --rw write --bs 1m --size 2m --numjobs 2 \
	--output-format=json
python3 -c 'import json, sys
print(" ".join(str(j["wire"]["requests"]) for j in json.load(open(sys.argv[1]))["jobs"]))' \
	"$T/stdout" >"$T/clones"
check "...each thread's section has its own request, not the job's two ($(cat "$T/clones"))" \
	test "$(cat "$T/clones")" = "1 1"
expect_rc 1 "an empty prefix is one line" run --engine s3 --directory s3://llmio/empty \
	--rw read --bs 1m
expect_err "...saying what to do" "no objects under s3://llmio/empty"
s3_curl -T "$T/odd" "$S3_URL/llmio/tmp/llmio.1"
expect_rc 0 "cleanup=1 deletes what the run created" run --engine s3 --directory \
	s3://llmio/tmp --nrfiles 2 --rw write --bs 1m --size 2m --cleanup=1 \
	--json "$T/del.json"
json_check "$T/del.json" "one created object deleted" '"1 created objects deleted" in j["engine_notes"]'
s3_curl -o /dev/null -w '%{http_code}' "$S3_URL/llmio/tmp/llmio.0" >"$T/stdout"
check "the object llmio created is gone" test "$(cat "$T/stdout")" = 404
s3_curl -o /dev/null -w '%{http_code}' "$S3_URL/llmio/tmp/llmio.1" >"$T/stdout"
check "the one that existed before stays" test "$(cat "$T/stdout")" = 200

# --- errors ----------------------------------------------------------------------------------
if [ "$S3_AUTH" = 1 ]; then
	AWS_ACCESS_KEY_ID=WRONG expect_rc 1 "wrong credentials: one line" run --engine s3 \
		--filename s3://llmio/one --rw read --bs 4k
	expect_err "...HTTP 403 and the fix" "HTTP 403" "AWS_ACCESS_KEY_ID"
else
	note "$S3_SERVER accepts any credentials: the 403 check is s3rver's run's"
fi
expect_rc 2 "a file engine refuses an s3:// URL" run --engine psync --filename s3://llmio/one \
	--rw read --bs 4k
expect_err "...naming the engine to use" "--engine s3"
expect_rc 2 "--direct=1 does not apply to objects" run --engine s3 --filename s3://llmio/one \
	--rw read --bs 4k --direct=1
expect_err "...and the line says why" "no local file I/O" "--direct=0"
expect_rc 2 "random writes are refused up front" run --engine s3 --filename s3://llmio/rw \
	--rw randwrite --bs 5m --size 20m --randseed 3
expect_err "...saying why and what to use" "an object is written sequentially" "--rw write"
expect_rc 2 "...randrw too" run --engine s3 --filename s3://llmio/rw --rw randrw --bs 5m \
	--size 20m
check "...and nothing was written" test "$(obj_list rw)" = "0 0"

# TLS: s3rver with a self-signed certificate, trusted through AWS_CA_BUNDLE
if [ "$S3_SERVER" != s3rver ]; then
	note "the TLS checks run against s3rver (its --cert): they are the s3rver run's"
elif command -v openssl >/dev/null &&
	openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$T/tls.key" -out "$T/tls.crt" \
		>/dev/null 2>&1; then
	TLS_PORT=$(s3_free_port)
	"$S3RVER" -d "$T/s3tls" -a 127.0.0.1 -p "$TLS_PORT" --silent --configure-bucket llmio \
		--key "$T/tls.key" --cert "$T/tls.crt" >"$T/s3tls.log" 2>&1 &
	TLS_PID=$!
	for _ in $(seq 300); do
		curl -s --cacert "$T/tls.crt" -o /dev/null "https://127.0.0.1:$TLS_PORT/" && break
		sleep 0.1
	done
	AWS_ENDPOINT_URL=https://127.0.0.1:$TLS_PORT AWS_CA_BUNDLE=$T/tls.crt expect_rc 0 \
		"PUT over TLS" run --engine s3 --filename s3://llmio/tls --rw write --bs 1m --size 1m
	AWS_ENDPOINT_URL=https://127.0.0.1:$TLS_PORT AWS_CA_BUNDLE=$T/tls.crt expect_rc 0 \
		"GET over TLS" run --engine s3 --filename s3://llmio/tls --rw read --bs 256k \
		--iodepth 2 --json "$T/tls.json"
	json_check "$T/tls.json" "...1 MiB read, 4 requests" \
		'j["read"]["io_bytes"] == 1048576 and j["wire"]["requests"] == 4'
	json_check "$T/tls.json" "...and the notes say https" 'j["engine_notes"].startswith("s3: https://")'
	AWS_ENDPOINT_URL=https://127.0.0.1:$TLS_PORT expect_rc 1 "an untrusted certificate: one line" \
		run --engine s3 --filename s3://llmio/tls --rw read --bs 256k
	expect_err "...naming the fix" "AWS_CA_BUNDLE"
	AWS_ENDPOINT_URL=https://127.0.0.1:$TLS_PORT expect_rc 1 "tls=off to a TLS server: one line" \
		run --engine s3 --filename s3://llmio/tls --rw read --bs 256k --tls=off
	expect_err "...saying what may be wrong" "tls=off"
	kill "$TLS_PID"; wait "$TLS_PID" 2>/dev/null; TLS_PID=
else
	note "openssl cannot make a certificate here: the TLS checks are skipped"
fi

# the server killed mid-run: the failing request, its offset and the cause; results kept
_show llmio run --engine s3 --filename s3://llmio/dir/big --rw randread --bs 64k \
	--runtime 60 --time_based --json "$T/kill.json"
timeout -k 5 120 "$LLMIO" run --engine s3 --filename s3://llmio/dir/big --rw randread --bs 64k \
	--runtime 60 --time_based --iodepth 2 --json "$T/kill.json" >"$T/stdout" 2>"$T/stderr" &
pid=$!
sleep 1.5
s3_stop
# s3_stop signed every request of the run again (tests/s3_resign.py): each kind llmio sends
if [ "$S3_SIGNED" = 1 ]; then
	for k in "ranged GET" HEAD list PUT initiate "upload part" complete abort delete; do
		check "...among them: $k" grep -q "kinds:.*$k" "$T/resign.out"
	done
else
	note "python3-botocore is not installed: the server's requests were not signed again"
fi
reap "$pid" 30 "llmio after its server was killed"
check "server killed: exit 1 (got $REAPED)" test "$REAPED" = 1
expect_err "...the request, the offset and the cause" "GET s3://llmio/dir/big bytes=" \
	"error at offset" "the server went away"
check "...in one stderr line" test "$(wc -l <"$T/stderr")" = 1
json_check "$T/kill.json" "...and the result is kept, with the error and what was read" \
	'j["error"] != 0 and j["read"]["total_ios"] > 0'

# 503 SlowDown retried with backoff and counted; short reads (a fault server)
fault() { # fault MODE: start the fault server with a 1 MiB object
	rm -f "$T/fault.port" "$T/fault.log"
	python3 "$(dirname "$0")/s3_fault_server.py" "$1" 1048576 "$T/fault.port" "$T/fault.log" &
	FAULT_PID=$!
	for _ in $(seq 100); do [ -s "$T/fault.port" ] && break; sleep 0.1; done
	export AWS_ENDPOINT_URL=http://127.0.0.1:$(cat "$T/fault.port")
}
fault slowdown:3
expect_rc 0 "503 SlowDown three times: retried and read" run --engine s3 --filename \
	s3://b/obj --rw read --bs 256k --json "$T/slow.json"
json_check "$T/slow.json" "3 retries counted, 1 MiB read" \
	'j["wire"]["retries"] == 3 and j["read"]["io_bytes"] == 1048576'
check "the fault server saw 3 503s then 4 good ranges" \
	test "$(grep -c ' 503$' "$T/fault.log") $(grep -c ' 206$' "$T/fault.log")" = "3 4"
kill "$FAULT_PID"; wait "$FAULT_PID" 2>/dev/null
fault slowdown:1
expect_rc 1 "retries=0: the 503 is the error" run --engine s3 --filename s3://b/obj --rw read \
	--bs 256k --retries=0
expect_err "...named with its cause" "HTTP 503 SlowDown" "throttling"
kill "$FAULT_PID"; wait "$FAULT_PID" 2>/dev/null
fault short
expect_rc 1 "a short read is one line" run --engine s3 --filename s3://b/obj --rw read \
	--bs 256k --json "$T/short.json"
expect_err "...with the byte counts" "short read, 131072 of 262144 bytes" "bytes=0-262143"
json_check "$T/short.json" "...and the result is kept" 'j["error"] != 0'

# every request llmio signs (PUT, multipart initiate / part / complete, signed payloads),
# signed again by botocore from what was captured: the same signature
if /usr/bin/python3 -c 'import botocore' 2>/dev/null; then
	kill "$FAULT_PID"; wait "$FAULT_PID" 2>/dev/null
	fault capture
	AWS_ACCESS_KEY_ID=AKIDLLMIO AWS_SECRET_ACCESS_KEY=llmio/secret/Key expect_rc 0 \
		"a signed-payload PUT" run --engine s3 --filename s3://b/one --rw write --bs 4k \
		--size 4k --sha256=1 --md5=1 --json "$T/sha.json"
	AWS_ACCESS_KEY_ID=AKIDLLMIO AWS_SECRET_ACCESS_KEY=llmio/secret/Key expect_rc 0 \
		"a multipart upload" run --engine s3 --filename s3://b/dir/mp --rw write --bs 5m \
		--size 10m --iodepth 2
	s3_resign llmio/secret/Key "$T/fault.log"
	check "botocore signs llmio's requests alike: $(tail -c 600 "$T/resign.out")" test "$RC" = 0
	check "...all 5 of them (PUT, initiate, 2 parts, complete)" grep -q '^5 signatures' "$T/resign.out"
	sed '2s/Signature=[0-9a-f]/Signature=x/' "$T/fault.log" >"$T/tampered.log"
	s3_resign llmio/secret/Key "$T/tampered.log"
	check "...and a signature changed by one digit is caught" grep -q '^MISMATCH' "$T/resign.out"
	json_check "$T/sha.json" "hashing counted apart" 'j["wire"]["hash_s"] > 0'
	check "...with the payload's SHA-256 signed when asked" \
		grep -q '"x-amz-content-sha256": "[0-9a-f]\{64\}"' "$T/fault.log"
else
	note "python3-botocore is not installed: the second signer check is skipped"
fi
finish
