# tests/s3_server.sh: an S3 server for the s3 tests, sourced after lib.sh (not a test itself).
#
#     . "$(dirname "$0")/s3_server.sh"
#     s3_start            # the server on 127.0.0.1, a free port, bucket "llmio"
#     ... llmio run --engine s3 --filename s3://llmio/key ...
#     s3_stop             # before finish: stops it and checks every request's signature
#
# Two S3 implementations that share no code answer the same tests (ctest runs each s3 test once
# per server, docs/testing.md); LLMIO_S3_SERVER picks one:
#  - s3rver (the default; npm, Node): data in $T/s3data;
#  - fauxqs (npm, Node, on fastify; tests/s3_fauxqs.mjs starts it on loopback only): in memory;
#    it accepts any credentials, so S3_AUTH=0 (tests of a 403 skip).
# scripts/bootstrap.sh puts both in .tools/ (LLMIO_S3RVER, LLMIO_FAUXQS name others); without
# the one asked for the test skips (exit 77) saying so.  s3_start exports AWS_ENDPOINT_URL and
# the credentials (S3RVER/S3RVER), and sets S3_URL (the endpoint), S3_PID, S3_DIR, S3_SERVER.
#
# The second signer: with python3-botocore installed, tests/s3_sign_proxy.py stands between
# llmio and the server and logs every request; s3_stop signs each again with botocore
# (tests/s3_resign.py) and checks that every signature is the one llmio sent.

S3_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
S3_TESTS=$S3_REPO/tests
S3RVER=${LLMIO_S3RVER:-$S3_REPO/.tools/node_modules/.bin/s3rver}
FAUXQS=${LLMIO_FAUXQS:-$S3_REPO/.tools/node_modules/fauxqs/dist/app.js}
S3_SERVER=${LLMIO_S3_SERVER:-s3rver}
S3_AUTH=1
S3_PID=
S3_PROXY_PID=
S3_SIGLOG=
S3_SIGNED=0 # 1: the run's requests are logged and signed again at s3_stop

s3_need() {
	case $S3_SERVER in
	s3rver) [ -x "$S3RVER" ] || skip_all "s3rver is not installed ($S3RVER): run scripts/bootstrap.sh" ;;
	fauxqs) [ -f "$FAUXQS" ] || skip_all "fauxqs is not installed ($FAUXQS): run scripts/bootstrap.sh" ;;
	*) fail "LLMIO_S3_SERVER=$S3_SERVER: use s3rver or fauxqs"; finish ;;
	esac
	command -v node >/dev/null || skip_all "node is not installed: $S3_SERVER needs it"
	command -v curl >/dev/null || skip_all "curl is not installed"
}

s3_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# s3_wait_port FILE PID WHAT: wait until PID wrote its port to FILE (30 s at most).
s3_wait_port() {
	for _ in $(seq 300); do
		[ -s "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	cat "$T/$3.log" 2>/dev/null
	fail "$3 did not start"
	finish
}

# s3_start [BUCKET]: start the server and wait until it answers (30 s at most on a busy machine).
s3_start() {
	local bucket=${1:-llmio} port i
	s3_need
	S3_DIR=$T/s3data
	mkdir -p "$S3_DIR"
	rm -f "$T/s3.port" "$T/s3proxy.port"
	if [ "$S3_SERVER" = s3rver ]; then
		port=$(s3_free_port)
		"$S3RVER" -d "$S3_DIR" -a 127.0.0.1 -p "$port" --silent --configure-bucket "$bucket" \
			>"$T/s3server.log" 2>&1 &
		S3_PID=$!
	else
		S3_AUTH=0
		node "$S3_TESTS/s3_fauxqs.mjs" "$FAUXQS" "$T/s3.port" >"$T/s3server.log" 2>&1 &
		S3_PID=$!
		s3_wait_port "$T/s3.port" "$S3_PID" s3server
		port=$(cat "$T/s3.port")
	fi
	S3_URL=http://127.0.0.1:$port
	if /usr/bin/python3 -c 'import botocore' 2>/dev/null; then
		S3_SIGLOG=$T/s3sign.log S3_SIGNED=1
		: >"$S3_SIGLOG"
		/usr/bin/python3 "$S3_TESTS/s3_sign_proxy.py" "$port" "$T/s3proxy.port" "$S3_SIGLOG" \
			>"$T/s3proxy.log" 2>&1 &
		S3_PROXY_PID=$!
		s3_wait_port "$T/s3proxy.port" "$S3_PROXY_PID" s3proxy
		S3_URL=http://127.0.0.1:$(cat "$T/s3proxy.port")
	fi
	export AWS_ENDPOINT_URL=$S3_URL AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
	export AWS_REGION=us-east-1
	unset AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN AWS_PROFILE
	for i in $(seq 300); do
		curl -s -o /dev/null "$S3_URL/" && break
		kill -0 "$S3_PID" 2>/dev/null || { cat "$T/s3server.log"; fail "$S3_SERVER exited at start"; finish; }
		sleep 0.1
	done
	[ "$i" -lt 300 ] || { fail "$S3_SERVER did not answer on $S3_URL within 30 s"; finish; }
	# s3rver made the bucket (--configure-bucket); fauxqs makes it on request
	[ "$S3_SERVER" = s3rver ] || s3_curl -o /dev/null -X PUT "$S3_URL/$bucket"
	note "S3 server: $S3_SERVER on $S3_URL${S3_SIGLOG:+ (through the signature log)}"
}

# s3_stop: stop the server and, when its requests were logged, sign each again with botocore.
s3_stop() {
	[ -n "$S3_PID" ] || return 0
	[ -n "$S3_PROXY_PID" ] && kill "$S3_PROXY_PID" 2>/dev/null
	kill "$S3_PID" 2>/dev/null
	wait "$S3_PID" 2>/dev/null
	[ -n "$S3_PROXY_PID" ] && wait "$S3_PROXY_PID" 2>/dev/null
	S3_PID= S3_PROXY_PID=
	[ -n "$S3_SIGLOG" ] || return 0
	s3_resign S3RVER "$S3_SIGLOG"
	check "botocore signs every request sent to $S3_SERVER alike: $(tail -c 600 "$T/resign.out")" \
		test "$RC" = 0
	S3_SIGLOG=
}

# s3_resign SECRET LOG...: tests/s3_resign.py over the logs; RC its status, $T/resign.out its line.
s3_resign() {
	/usr/bin/python3 "$S3_TESTS/s3_resign.py" "$@" >"$T/resign.out" 2>&1
	RC=$?
}

# s3_curl ARGS...: curl signed as the tests' user (what the tests compare llmio with).
s3_curl() {
	curl -sS --aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}

# obj_list PREFIX: "COUNT BYTES" of the objects under PREFIX in bucket llmio, as the server
# lists them.
obj_list() {
	s3_curl "$S3_URL/llmio?list-type=2&prefix=$1" | python3 -c '
import re, sys
sizes = [int(s) for s in re.findall(r"<Size>(\d+)</Size>", sys.stdin.read())]
print(len(sizes), sum(sizes))'
}
