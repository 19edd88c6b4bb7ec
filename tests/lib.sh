# tests/lib.sh: helpers sourced by tests/cli_*.sh (not a test itself).
#
# Every cli_*.sh is run by ctest as
#     bash tests/cli_X.sh LLMIO_BINARY EXAMPLE_BINARY
# with LLMIO_TEST_DIR=<build>/testdata.  Exit 0 = pass, 1 = fail, 77 = skipped (reason on stdout).
#
# Usage in a script:
#     . "$(dirname "$0")/lib.sh"          # sets LLMIO, EXAMPLE, makes $T, installs the trap
#     on_exit() { ...extra cleanup... }   # optional; runs before $T is removed
#     expect_rc 2 "unknown engine" run --ioengine nope ...
#     expect_err "unknown engine lists engines" io_uring
#     finish
#
# The checks never stop the script: each failure prints "FAIL: ..." and is counted, and
# finish() exits 1 if there was any.

set -u

LLMIO=${1:?usage: $0 LLMIO_BINARY [EXAMPLE_BINARY]}
EXAMPLE=${2:-}
case $LLMIO in /*) ;; *) LLMIO=$PWD/$LLMIO ;; esac
case $EXAMPLE in /* | '') ;; *) EXAMPLE=$PWD/$EXAMPLE ;; esac
[ -x "$LLMIO" ] || { echo "FAIL: $LLMIO is not an executable"; exit 1; }

FAILS=0
CHECKS=0
RC=0

pass() { CHECKS=$((CHECKS + 1)); echo "ok:   $*"; }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL: $*"; }
note() { echo "note: $*"; }
check() { # check DESC CMD...: passes when CMD succeeds
	local desc=$1; shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}
skip_all() { echo "SKIP: $*"; exit 77; }
# reap PID SECONDS WHAT: wait up to SECONDS for the background PID to end; one still running then
# is killed and fails with "WHAT: still running SECONDS s later".  REAPED holds its exit status.
reap() {
	local pid=$1 secs=$2 what=$3
	for _ in $(seq $((secs * 10))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null && fail "$what: still running $secs s later; killed"
	wait "$pid"
	REAPED=$?
}
# perf_mode: true when the script runs as a performance test (ctest label perf, `make
# check-perf`, behind tests/perf_gate.sh, with LLMIO_TEST_PERF=1); then it also checks its
# thresholds against the clock (rates, windows).  False in the correctness suite (`make
# test`), whose checks must hold however busy the machine is.
perf_mode() { [ "${LLMIO_TEST_PERF:-0}" = 1 ]; }

on_exit() { :; }
_cleanup() {
	on_exit
	[ -n "${T:-}" ] && [ -d "$T" ] && rm -rf "$T"
}
trap _cleanup EXIT
trap 'exit 1' INT TERM HUP

# Scratch directory under the build tree (on the work disk, not tmpfs, so O_DIRECT and the
# device counters behave as they would for a user).
TEST_ROOT=${LLMIO_TEST_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$TEST_ROOT" || { echo "FAIL: cannot create $TEST_ROOT"; exit 1; }
T=$(mktemp -d "$TEST_ROOT/$(basename "$0" .sh).XXXXXX") || { echo "FAIL: mktemp"; exit 1; }

# run CMD...: runs CMD with a watchdog; stdout -> $T/stdout, stderr -> $T/stderr, status -> RC.
# llmio ARGS...: the same for the llmio binary.  Both echo the command to the log.
_run() {
	timeout -k 5 120 "$@" >"$T/stdout" 2>"$T/stderr"
	RC=$?
	return 0
}
_show() { local a="$*"; echo "+ ${a//$T/\$T}"; } # the log shows paths under $T as $T
run() { _show "$@"; _run "$@"; }
llmio() { _show llmio "$@"; _run "$LLMIO" "$@"; }

# expect_rc WANT DESC ARGS...: runs llmio ARGS and checks the exit status; on an error exit
# also checks that stderr holds exactly one line and that it starts with "llmio".
expect_rc() {
	local want=$1 desc=$2; shift 2
	llmio "$@"
	if [ "$RC" -ne "$want" ]; then
		fail "$desc: exit $RC, expected $want; stderr: $(head -c 400 "$T/stderr")"
		return 1
	fi
	if [ "$want" -ne 0 ]; then
		local lines
		lines=$(wc -l <"$T/stderr")
		if [ "$lines" -ne 1 ] || ! head -n 1 "$T/stderr" | grep -q '^llmio'; then
			fail "$desc: expected one stderr line starting 'llmio', got $lines: $(head -c 400 "$T/stderr")"
			return 1
		fi
	fi
	pass "$desc (exit $RC)"
}

# expect_err DESC TEXT...: the last command's stderr contains every TEXT (fixed strings).
expect_err() {
	local desc=$1 s; shift
	for s in "$@"; do
		if ! grep -qF -- "$s" "$T/stderr"; then
			fail "$desc: stderr lacks '$s': $(head -c 400 "$T/stderr")"
			return 1
		fi
	done
	pass "$desc"
}

# expect_out DESC TEXT...: the same for stdout.
expect_out() {
	local desc=$1 s; shift
	for s in "$@"; do
		if ! grep -qF -- "$s" "$T/stdout"; then
			fail "$desc: stdout lacks '$s'"
			return 1
		fi
	done
	pass "$desc"
}

# json_check FILE DESC PYEXPR: evaluates the Python expression PYEXPR with d = the parsed
# JSON document and j = d["jobs"][0] (when present); passes when it is true.  A failing
# expression prints what it evaluated to.
json_check() {
	local file=$1 desc=$2 expr=$3 out
	if out=$(python3 - "$file" "$expr" 2>&1 <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
jobs = d.get("jobs") if isinstance(d, dict) else None
j = jobs[0] if jobs else None
try:
    ok = eval(sys.argv[2])
except Exception as e:  # a missing key is a failed check, reported precisely
    print("%s: %s" % (type(e).__name__, e))
    sys.exit(1)
if not ok:
    print("expression is false")
    sys.exit(1)
EOF
	); then
		pass "$desc"
	else
		fail "$desc [$expr]: $out"
	fi
}

# json_get FILE PYEXPR: prints the value of PYEXPR (same d and j as json_check).
json_get() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
jobs = d.get("jobs") if isinstance(d, dict) else None
j = jobs[0] if jobs else None
print(eval(sys.argv[2]))
EOF
}

# no_outputs DESC FILE...: none of FILE nor FILE.tmp.* exists (a failed run leaves nothing).
no_outputs() {
	local desc=$1 f g left=(); shift
	for f in "$@"; do
		for g in "$f" "$f".tmp* "$f".*tmp*; do
			[ -e "$g" ] && left+=("$g")
		done
	done
	if [ ${#left[@]} -eq 0 ]; then pass "$desc"; else fail "$desc: left behind: ${left[*]}"; fi
	rm -f -- "${left[@]}"
}

# said DESC TEXT...: the last command's stdout says every TEXT, its wrapped lines joined (a
# long path wraps onto an indented next line).
said() {
	local desc=$1 t; shift
	sed -e ':a' -e 'N' -e '$!ba' -e 's/\n  */ /g' "$T/stdout" >"$T/joined"
	for t in "$@"; do
		grep -qF -- "$t" "$T/joined" || { fail "$desc: stdout lacks '$t'"; return 0; }
	done
	pass "$desc"
}

# fp FILE: a fingerprint of FILE (content, size, mtime), to check that it was left alone.
fp() { echo "$(md5sum <"$1") $(stat -c '%s %Y' "$1")"; }

finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS of $CHECKS checks failed"
		exit 1
	fi
	echo "all $CHECKS checks passed"
	exit 0
}
