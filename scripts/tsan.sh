#!/usr/bin/env bash
# `make test-tsan`: build with ThreadSanitizer (clang, BUILD_TSAN) and run the tests whose code
# runs threads: the job's worker and control threads, the engines, CPU accounting, the I/O
# sources, the tensor store's I/O thread, the trace tools, and the CLI runs of jobs, recipes,
# replay and the tracer.
#   scripts/tsan.sh [ctest -R regex]
# ThreadSanitizer's reports go to BUILD_TSAN/tsan/ (not into the tests' stderr, which some
# tests check).  The verdict is ThreadSanitizer's: exit 1 when it reported anything (each
# report is listed), 0 when not.  A test that fails without a report is shown too but is not a
# race: a few timing assertions do not hold at TSan's 5-15x slowdown (docs/fuzzing.md).
# The traced programs run uninstrumented (the preload tracer is never sanitized).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_TSAN:-build-tsan}
tests=${1:-^(test_job|test_engines|test_cpu|test_trace|test_source|test_store|cli_run|cli_trace|cli_workload|cli_replay)$}

scripts/bootstrap.sh "$build" -DLLMIO_TSAN=ON -DCMAKE_C_COMPILER=clang || exit 2
rm -rf "$build/tsan"
mkdir -p "$build/tsan"
(cd "$build" && TSAN_OPTIONS="suppressions=$PWD/../tests/tsan.supp log_path=$PWD/tsan/report \
second_deadlock_stack=1 exitcode=66" ctest --output-on-failure -j2 -R "$tests")
rc=$?
reports=$(ls "$build/tsan" | wc -l)
if [ "$reports" -gt 0 ]; then
	echo "tsan: $reports process(es) with ThreadSanitizer reports:"
	for f in "$build"/tsan/*; do
		echo "--- $f"
		grep -E 'WARNING: ThreadSanitizer|^    #[0-3] ' "$f" | head -12
	done
	exit 1
fi
if [ "$rc" -ne 0 ]; then
	echo "tsan: no ThreadSanitizer report; the failures above are the tests' own assertions"
	echo "tsan: (timing checks do not hold under TSan's slowdown; see docs/fuzzing.md)"
fi
echo "tsan: clean (no ThreadSanitizer report)"
exit 0
