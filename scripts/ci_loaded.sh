#!/usr/bin/env bash
# CI's loaded stage: the gcc build's correctness suite (ctest -LE perf, as `make test` runs it)
# with two busy loops per core beside it, as on a shared machine.  A test that fails here is a
# defect in the test or the code (docs/testing.md): nothing is retried.
#   scripts/ci_loaded.sh [BUILD_DIR]   (default build; built by `make test` before)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -f "$build/CTestTestfile.cmake" ] || { echo "ci_loaded: $build is not built (make build)" >&2; exit 1; }
n=$((2 * $(nproc)))
pids=()
stop() { kill "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT
for _ in $(seq "$n"); do
	# bounded: a loop outlives nothing, whatever happens to this script
	timeout 3600 sh -c 'while :; do :; done' &
	pids+=($!)
done
echo "ci_loaded: $n busy loops beside the suite ($(nproc) CPUs)"
cd "$build"
ctest --output-on-failure -j2 -LE perf
