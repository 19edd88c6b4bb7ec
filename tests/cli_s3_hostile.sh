#!/usr/bin/env bash
# shellcheck disable=SC2317 # on_exit and small helpers run from the trap or via check
# cli_s3_hostile.sh: the s3 engine against a hostile server (tests/s3_fault_server.py: loopback,
# ends by itself after 300 s, stopped here by its pid).  Each case ends with the exit status
# asked (1 for what the server did, 2 for a bad request), one stderr line naming the problem,
# no signal, and within a bound of time: the documented bound plus 20 s for a busy machine.
#
#  1. redirects are never followed: the session token stays with the endpoint, a redirect to
#     another host, to ftp:// or to itself is one line saying where it pointed;
#  2. what the server says is text: an ETag is escaped into the multipart complete, a listed key
#     with a '..' segment or outside the prefix is refused, a key with CR LF is read whole;
#  3. listings: a repeated continuation token or page fails, a 1024-byte key is listed, a page
#     is at most 16 MiB, and 100,000 listed objects cost the same memory with 1 or 4 threads;
#  4. time: an unanswered request ends at stall=, --runtime and Ctrl-C end a run within a
#     second whatever the server does, a slow but moving transfer does not trip stall=, a
#     503's retries wait 10 ms, doubling;
#  5. wrong answers: a ranged GET answered 200, or 206 with another range, or a longer body;
#     a HEAD without Content-Length; a 503 on HEAD, retried; a multipart initiate without
#     UploadId: each one line naming what the server did.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

FAULT_PID=
fault_stop() {
	if [ -n "$FAULT_PID" ]; then
		kill "$FAULT_PID" 2>/dev/null
		wait "$FAULT_PID" 2>/dev/null
		FAULT_PID=
	fi
}
on_exit() { fault_stop; }

# fault MODE [SIZE]: (re)start the fault server with one object of SIZE bytes (1 MiB)
fault() {
	fault_stop
	rm -f "$T/fault.port"
	: >"$T/fault.log"
	S3_FAULT_LIFETIME=300 python3 "$(dirname "$0")/s3_fault_server.py" "$1" "${2:-1048576}" \
		"$T/fault.port" "$T/fault.log" &
	FAULT_PID=$!
	for _ in $(seq 300); do [ -s "$T/fault.port" ] && break; sleep 0.1; done
	[ -s "$T/fault.port" ] || skip_all "the fault server did not start"
	AWS_ENDPOINT_URL=http://127.0.0.1:$(cat "$T/fault.port")
	export AWS_ENDPOINT_URL
}

# within DESC SECONDS WANT ARGS...: expect_rc WANT DESC ARGS, and the run took under SECONDS
within() {
	local desc=$1 bound=$2 want=$3 t0 ms
	shift 3
	t0=$(date +%s%N)
	expect_rc "$want" "$desc" "$@"
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "$desc: ended in $ms ms (bound $bound s)" test "$ms" -lt $((bound * 1000))
}

# interrupt DESC ARGS...: llmio ARGS, Ctrl-C (SIGINT) 1 s later: it ends within 20 s (the
# documented second, and slack for a busy machine) with exit 1, no signal, and one line
interrupt() {
	local desc=$1 pid t0 ms
	shift
	"$LLMIO" "$@" >"$T/stdout" 2>"$T/stderr" &
	pid=$!
	sleep 1
	kill -INT "$pid"
	t0=$(date +%s%N)
	reap "$pid" 20 "$desc"
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "$desc: exit 1, no signal (exit $REAPED)" test "$REAPED" -eq 1
	check "$desc: ended $ms ms after the signal (bound 20 s)" test "$ms" -lt 20000
	check "$desc: one line: $(head -c 300 "$T/stderr")" test "$(wc -l <"$T/stderr")" -eq 1
}

# logged DESC COUNT PATTERN: the fault server logged COUNT lines matching PATTERN (grep -E)
logged() {
	local n
	n=$(grep -cE -- "$3" "$T/fault.log")
	check "$1 ($n lines of '$3', want $2)" test "$n" -eq "$2"
}

export AWS_ACCESS_KEY_ID=AKIDLLMIO AWS_SECRET_ACCESS_KEY=llmio/secret/Key
export AWS_SESSION_TOKEN=llmio-session-token AWS_REGION=us-east-1
unset AWS_ENDPOINT_URL_S3 AWS_PROFILE AWS_CA_BUNDLE
GET=(run --engine s3 --filename s3://b/obj --rw read --bs 256k)
LIST=(run --engine s3 --directory s3://b/p --rw read --bs 4k)

echo "== 1. redirects are not followed; credentials stay with the endpoint"
fault redirect
within "HEAD redirected to another host" 20 1 "${GET[@]}"
expect_err "...one line saying where it pointed" "HEAD http://127.0.0.1:" \
	"HTTP 307 redirect to http://127.0.0." "not followed, credentials stay with the endpoint"
logged "...and the other host got no request, nor the session token" 0 '^OTHER'
fault redirect-get
within "GET redirected to another host" 20 1 "${GET[@]}"
expect_err "...one line saying where it pointed" "GET s3://b/obj bytes=0-262143: HTTP 307 redirect to http://127.0.0."
logged "...and the other host got no request, nor the session token" 0 '^OTHER'
fault redirect-ftp
within "a redirect to ftp://" 20 1 "${GET[@]}"
expect_err "...is not followed" "HTTP 307 redirect to ftp://"
logged "...nothing reached the ftp:// listener" 0 '^OTHER'
fault redirect-loop
within "a redirect to itself" 20 1 "${GET[@]}"
expect_err "...is one request, not a loop" "HTTP 307 redirect to http://127.0.0.1:"
logged "...one request" 1 '^REDIRECT'
AWS_ENDPOINT_URL=ftp://127.0.0.1:1 within "an ftp:// endpoint" 20 2 "${GET[@]}"
expect_err "...is refused" "is not http:// or https://"

echo "== 2. XML and keys"
fault etag
within "a multipart upload whose parts' ETags are XML markup" 20 0 run --engine s3 \
	--filename s3://b/mp --rw write --bs 5m --size 10m
run python3 - "$T/fault.log" <<'EOF'
import json, sys, xml.etree.ElementTree as ET
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["method"] == "POST" and "uploadId=" in r["path"]:
        parts = ET.fromstring(r["body"]).findall("Part")
        etags = [p.find("ETag").text for p in parts]
        want = '"x</ETag></Part><Part><PartNumber>7</PartNumber><ETag>y"'
        ok = len(parts) == 2 and etags == [want, want]
        print(len(parts), etags)
        sys.exit(0 if ok else 1)
sys.exit(1)
EOF
check "...the complete names 2 parts, each ETag as the server sent it: $(head -c 300 "$T/stdout")" test "$RC" -eq 0
fault list-dotdot
within "a listed key with a '..' segment" 20 1 "${LIST[@]}"
expect_err "...is refused" "listed key s3://b/p/../q/obj: the key has a '..' segment"
logged "...and never requested" 0 '^GET /'
within "a key with a '..' segment, asked for" 20 2 run --engine s3 --filename s3://b/p/../q \
	--rw read --bs 4k
expect_err "...is refused" "s3://b/p/../q: the key has a '..' segment"
fault list-outside
within "a listed key outside the prefix" 20 1 "${LIST[@]}"
expect_err "...is refused" "listed key s3://b/other/obj is outside the prefix asked"
fault list-crlf 4096
within "a listed key with CR LF in it" 20 0 "${LIST[@]}"
logged "...is read whole, CR LF escaped" 1 '^GET /b/p/cut%0D%0Aobj '
logged "...and no cut key is read" 0 '^GET /b/p/cut '

echo "== 3. listings"
fault list-loop
within "a listing that answers its token with itself" 20 1 "${LIST[@]}"
expect_err "...fails" "the server answered continuation token 'same' with itself"
logged "...after two pages" 2 '^LIST'
fault list-repeat
within "a listing that repeats its page under new tokens" 20 1 "${LIST[@]}"
expect_err "...fails" "the server listed key p/a after p/a, out of S3's key order"
fault list-long 4096
within "a listing with a 1024-byte key" 20 0 "${LIST[@]}" --json "$T/long.json"
json_check "$T/long.json" "...reads all 3 objects" 'j["read"]["io_bytes"] == 3 * 4096'
logged "...the long one included" 1 "^GET /b/p/k{1022} "
# memory: what llmio's process held at most (ru_maxrss of the child, KiB)
maxrss() {
	python3 -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[-1] + ".err", "w"), timeout=120).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
fault list-huge
within "a listing page of 20 MiB" 20 1 "${LIST[@]}"
expect_err "...fails" "the answer is larger than 16 MiB, more than any S3 reply"
read -r rc kb < <(maxrss "$LLMIO" "${LIST[@]}" --json "$T/huge")
check "...holding at most 16 MiB of it (exit $rc, max RSS $kb KiB)" test "$rc" -eq 1 -a "$kb" -lt 100000
fault list-many:100000 4096
read -r rc1 kb1 < <(maxrss "$LLMIO" "${LIST[@]}" --runtime 1 --numjobs 1 --json "$T/many1")
read -r rc4 kb4 < <(maxrss "$LLMIO" "${LIST[@]}" --runtime 1 --numjobs 4 --json "$T/many4")
check "100,000 listed objects, 1 and 4 threads (exit $rc1 $rc4): $(head -c 300 "$T/many4.err")" \
	test "$rc1" -eq 0 -a "$rc4" -eq 0
check "...the 3 more threads hold at most 40 MiB more ($kb1 KiB, $kb4 KiB)" \
	test $((kb4 - kb1)) -lt 40960

echo "== 4. time bounds"
fault hang-head
interrupt "Ctrl-C while a HEAD is never answered" "${GET[@]}"
expect_err "...saying so" "HEAD http://127.0.0.1:" "the run was stopped"
within "a HEAD never answered ends at stall=2s" 22 1 "${GET[@]}" --stall 2s
expect_err "...saying so" "HEAD http://127.0.0.1:" "no byte moved for" "(stall=2.0s)" "raise stall="
within "...or at timeout=2s" 22 1 "${GET[@]}" --stall 0 --timeout 2s
expect_err "...saying so" "HEAD http://127.0.0.1:" "timed out" "raise timeout= (or stall=)"
fault hang-complete
within "a multipart complete never answered ends at stall=2s" 22 1 run --engine s3 \
	--filename s3://b/mp --rw write --bs 5m --size 10m --stall 2s
expect_err "...saying so" "POST http://127.0.0.1:" "?uploadId=" "no byte moved for" "(stall=2.0s)"
fault hang-get
within "a GET never answered ends at stall=2s" 22 1 "${GET[@]}" --stall 2s
expect_err "...saying so" "GET s3://b/obj bytes=0-262143: no byte moved for" "(stall=2.0s)" \
	"raise stall="
within "a GET never answered: --runtime 2 ends the run" 23 0 "${GET[@]}" --runtime 2 --stall 0 \
	--json "$T/hang.json"
json_check "$T/hang.json" "...which says it abandoned the request" \
	'"1 request unanswered: abandoned" in j["engine_notes"]'
json_check "$T/hang.json" "...and its window ended on time: runtime 2 s (+ 1 s), no grace" \
	'2000 <= j["job_runtime"] < 3000'
interrupt "Ctrl-C with a GET never answered" "${GET[@]}" --runtime 60 --stall 0
# the same client in its own process (s3-agent): the job's stop reaches it there too
AGET=(run --engine s3-agent --filename s3://b/obj --rw read --bs 256k)
within "s3-agent, a GET never answered: --runtime 2 ends the run" 23 0 "${AGET[@]}" \
	--runtime 2 --json "$T/ahang.json"
json_check "$T/ahang.json" "...its window ended on time, the request abandoned" \
	'2000 <= j["job_runtime"] < 3000 and "abandoned" in j["engine_notes"]'
interrupt "s3-agent: Ctrl-C with a GET never answered" "${AGET[@]}" --runtime 60
fault drip 262144
within "a 1 byte/s drip, rcvlowat=0: --runtime 2 ends the run" 23 0 "${GET[@]}" --runtime 2 \
	--rcvlowat 0 --stall 0
fault slow:3000 16384
within "a slow but moving transfer (3,000 B/s, 5.5 s) does not trip stall=2s" 26 0 \
	run --engine s3 --filename s3://b/obj --rw read --bs 16k --stall 2s --json "$T/slow.json"
json_check "$T/slow.json" "...and reads its 16 KiB" 'j["read"]["io_bytes"] == 16384'
fault slowdown:5
# the five backoffs sum to 310 ms (10 ms doubling); each used to be at least 1 s
within "five 503s, retried with 10 ms doubling" 4 0 run --engine s3 --filename s3://b/obj \
	--rw read --bs 1m --retries 5
logged "...five 503s, then the range" 5 ' 503$'

echo "== 5. wrong answers"
fault range200
within "a ranged GET answered 200" 20 1 "${GET[@]}"
expect_err "...is refused" "GET s3://b/obj bytes=0-262143: HTTP 200 to a ranged GET: the server ignored the Range"
fault range-wrong
within "a ranged GET answered with another range" 20 1 "${GET[@]}"
expect_err "...is refused" "HTTP 206 with Content-Range bytes 1-262144, not the range asked"
fault long-body
within "a ranged GET answered with more bytes" 20 1 "${GET[@]}"
expect_err "...names it" "the body is longer than the 262144 bytes asked"
fault head-nolen
within "a HEAD without Content-Length" 20 1 "${GET[@]}"
expect_err "...names it" "HEAD s3://b/obj: HTTP 200 without a Content-Length"
fault head503:2
within "a HEAD answered 503 twice" 20 0 "${GET[@]}"
logged "...is retried" 3 '^HEAD '
fault head503:99
within "a HEAD answered 503 past retries=2" 20 1 "${GET[@]}" --retries 2
expect_err "...names it" "HEAD s3://b/obj: HTTP 503"
logged "...after 2 retries" 3 '^HEAD '
fault no-uploadid
within "a multipart initiate without UploadId" 20 1 run --engine s3 --filename s3://b/mp \
	--rw write --bs 5m --size 10m
expect_err "...names it" "HTTP 200 without an <UploadId>"
finish
