#!/bin/bash
# cli_perf_gate.sh: tests/perf_gate.sh, which runs each performance test (make check-perf)
# only on a quiet machine.  The load average comes from a file the test writes (and that the
# gated command itself rewrites, to turn the machine busy during its run):
# - busy (load above half the CPUs) before: the command does not run; exit 77 naming the load
#   and the CPU count;
# - quiet: the command's own status (0 pass, 77 its own skip); a failure says it is not load;
# - a failure while the machine turned busy: exit 77, saying the figures are not a verdict;
# - LLMIO_PERF_FORCE=1: run and judged whatever the load;
# - --settle: waits for the load to fall, never fails.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

GATE=$(cd "$(dirname "$0")" && pwd)/perf_gate.sh
CPUS=$(getconf _NPROCESSORS_ONLN)
export LLMIO_PERF_LOADAVG=$T/loadavg
quiet() { echo "0.00 0.00 0.00 1/100 1" >"$LLMIO_PERF_LOADAVG"; }
busy() { echo "$((CPUS * 4)).00 1.00 1.00 9/100 1" >"$LLMIO_PERF_LOADAVG"; }
# expect_gate RC DESC TEXT CMD...: runs the gate on CMD; checks its status and its output
expect_gate() {
	local want=$1 desc=$2 text=$3; shift 3
	run bash "$GATE" "$@"
	if [ "$RC" -ne "$want" ]; then
		fail "$desc: exit $RC, expected $want: $(head -c 400 "$T/stdout")"
	elif ! grep -qF -- "$text" "$T/stdout"; then
		fail "$desc: output lacks '$text': $(head -c 400 "$T/stdout")"
	else
		pass "$desc (exit $RC)"
	fi
}

busy
expect_gate 77 "busy before: skipped, naming the load and the CPUs" \
	"SKIP: machine busy: 1-minute load average $((CPUS * 4)).00 on $CPUS online CPUs" \
	touch "$T/ran"
check "busy before: the command did not run" test ! -e "$T/ran"

quiet
expect_gate 0 "quiet: a passing command passes" "1-minute load average 0.00" true
expect_gate 77 "quiet: the command's own skip stays a skip" "" bash -c 'exit 77'
expect_gate 1 "quiet: a failure fails, and says it is not load" \
	"a performance regression, not load" false

# the command turns the machine busy and fails: the load average covers the run
quiet
expect_gate 77 "turned busy during a failing run: skipped" \
	"SKIP: failed (exit 3) while the machine became busy" \
	bash -c "echo '$((CPUS * 4)).00 0 0 1/1 1' >'$LLMIO_PERF_LOADAVG'; exit 3"
quiet
expect_gate 0 "turned busy during a passing run: still a pass" "" \
	bash -c "echo '$((CPUS * 4)).00 0 0 1/1 1' >'$LLMIO_PERF_LOADAVG'"

busy
LLMIO_PERF_FORCE=1 expect_gate 1 "forced on a busy machine: run and judged" \
	"forced (LLMIO_PERF_FORCE=1) on a busy machine" false

# the threshold: load above half the CPUs is busy; exactly half is not
echo "$(awk -v n="$CPUS" 'BEGIN {printf "%.2f", n / 2}') 0 0 1/1 1" >"$LLMIO_PERF_LOADAVG"
expect_gate 0 "load of half the CPUs: quiet enough" "" true
echo "$(awk -v n="$CPUS" 'BEGIN {printf "%.2f", n / 2 + 0.01}') 0 0 1/1 1" >"$LLMIO_PERF_LOADAVG"
expect_gate 77 "load just above half the CPUs: busy" "SKIP: machine busy" true

busy
expect_gate 0 "--settle on a busy machine gives up, exit 0" "still busy" --settle 0
quiet
expect_gate 0 "--settle on a quiet machine" "quiet enough" --settle 0
finish
