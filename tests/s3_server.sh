# tests/s3_server.sh: an S3 server for the s3 tests, sourced after lib.sh (not a test itself).
#
#     . "$(dirname "$0")/s3_server.sh"
#     s3_start            # s3rver on 127.0.0.1, a free port, data in $T/s3data, bucket "llmio"
#     ... llmio run --engine s3 --filename s3://llmio/key ...
#     s3_stop             # by its pid (also done on exit)
#
# s3rver comes from npm (scripts/bootstrap.sh puts it in .tools/; LLMIO_S3RVER names another);
# without it the test skips (exit 77) saying so.  s3_start exports AWS_ENDPOINT_URL and the
# credentials s3rver knows (S3RVER/S3RVER), and sets S3_URL (the endpoint), S3_PID, S3_DIR.

S3_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
S3RVER=${LLMIO_S3RVER:-$S3_REPO/.tools/node_modules/.bin/s3rver}
S3_PID=

s3_need() {
	[ -x "$S3RVER" ] || skip_all "s3rver is not installed ($S3RVER): run scripts/bootstrap.sh"
	command -v node >/dev/null || skip_all "node is not installed: s3rver needs it"
	command -v curl >/dev/null || skip_all "curl is not installed"
}

s3_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# s3_start [BUCKET]: start s3rver and wait until it answers (30 s at most on a busy machine).
s3_start() {
	local bucket=${1:-llmio} i
	s3_need
	S3_DIR=$T/s3data
	mkdir -p "$S3_DIR"
	S3_PORT=$(s3_free_port)
	"$S3RVER" -d "$S3_DIR" -a 127.0.0.1 -p "$S3_PORT" --silent --configure-bucket "$bucket" \
		>"$T/s3rver.log" 2>&1 &
	S3_PID=$!
	S3_URL=http://127.0.0.1:$S3_PORT
	export AWS_ENDPOINT_URL=$S3_URL AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
	export AWS_REGION=us-east-1
	unset AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN AWS_PROFILE
	for i in $(seq 300); do
		curl -s -o /dev/null "$S3_URL/" && return 0
		kill -0 "$S3_PID" 2>/dev/null || { cat "$T/s3rver.log"; fail "s3rver exited at start"; finish; }
		sleep 0.1
	done
	fail "s3rver did not answer on $S3_URL within 30 s"
	finish
}

s3_stop() {
	[ -n "$S3_PID" ] || return 0
	kill "$S3_PID" 2>/dev/null
	wait "$S3_PID" 2>/dev/null
	S3_PID=
}

# s3_curl ARGS...: curl signed as s3rver's user (what the tests compare llmio with).
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
