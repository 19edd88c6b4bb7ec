#!/bin/bash
# tests/perf_gate.sh: runs one performance test (ctest label "perf", `make check-perf`) only
# when the machine is quiet enough for its timing figures to mean something.
#
#     perf_gate.sh CMD [ARGS...]     run CMD; exit with its status, or 77 (skipped) as below
#     perf_gate.sh --settle SECONDS  wait up to SECONDS for the machine to become quiet, then
#                                    exit 0 either way (make check-perf does this once first,
#                                    so that its own build's load has time to decay)
#
# Busy: the 1-minute load average (first field of /proc/loadavg) is above half the online
# CPUs, i.e. on average more than one runnable task for every two CPUs over the last minute.
# A performance test compares CPU time or rates with the clock: it needs a CPU of its own, and
# on 2 CPUs often two (a job thread and its SQPOLL poller, or llmio and fio's device wait).
#
# - busy before CMD starts: CMD does not run; exit 77 with the load and the CPU count.
# - CMD fails and the machine is busy afterwards (the load average covers the last minute,
#   that is the run): exit 77, its output above, saying the failure is not a verdict.
# - CMD fails on a quiet machine: exit 1, saying the load was low, so it is a real regression.
# LLMIO_PERF_FORCE=1 runs and judges CMD whatever the load.  LLMIO_PERF_LOADAVG=FILE reads
# the load from FILE instead of /proc/loadavg (tests/cli_perf_gate.sh).
set -u

nproc_online() { getconf _NPROCESSORS_ONLN 2>/dev/null || nproc; }
load1() { cut -d' ' -f1 "${LLMIO_PERF_LOADAVG:-/proc/loadavg}"; }
# is_busy LOAD CPUS: true when LOAD > CPUS / 2
is_busy() { awk -v l="$1" -v n="$2" 'BEGIN {exit !(l > 0.5 * n)}'; }
describe() { echo "1-minute load average $1 on $2 online CPUs (busy above $(awk -v n="$2" 'BEGIN {print 0.5 * n}'))"; }

cpus=$(nproc_online)
if [ "${1:-}" = --settle ]; then
	limit=${2:-60}
	waited=0
	while is_busy "$(load1)" "$cpus" && [ "$waited" -lt "$limit" ]; do
		[ "$waited" -eq 0 ] && echo "check-perf: $(describe "$(load1)" "$cpus"): waiting up to ${limit} s for it to fall"
		sleep 5
		waited=$((waited + 5))
	done
	if is_busy "$(load1)" "$cpus"; then
		echo "check-perf: still busy, $(describe "$(load1)" "$cpus"): the performance tests will skip"
	else
		echo "check-perf: $(describe "$(load1)" "$cpus"): quiet enough"
	fi
	exit 0
fi
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARGS...] | --settle SECONDS" >&2; exit 2; }

force=${LLMIO_PERF_FORCE:-0}
before=$(load1)
if [ "$force" != 1 ] && is_busy "$before" "$cpus"; then
	echo "SKIP: machine busy: $(describe "$before" "$cpus"); timing thresholds are only judged on a quiet machine (LLMIO_PERF_FORCE=1 runs them anyway)"
	exit 77
fi
echo "perf: $(describe "$before" "$cpus") before the run"
"$@"
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then
	exit "$rc"
fi
after=$(load1)
if is_busy "$after" "$cpus"; then
	if [ "$force" = 1 ]; then
		echo "FAIL: exit $rc, forced (LLMIO_PERF_FORCE=1) on a busy machine: $(describe "$after" "$cpus") after the run, $before before"
		exit 1
	fi
	echo "SKIP: failed (exit $rc) while the machine became busy: $(describe "$after" "$cpus") after the run, $before before; the figures above are not a verdict: rerun make check-perf on a quiet machine"
	exit 77
fi
echo "FAIL: exit $rc with the machine quiet ($(describe "$after" "$cpus") after the run, $before before): a performance regression, not load"
exit 1
