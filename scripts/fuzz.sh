#!/usr/bin/env bash
# `make fuzz`: build the libFuzzer harnesses (tests/fuzz, with clang, in their own build
# directory) and run each for FUZZ_SECONDS, one after the other, then print one Markdown table
# row per harness for a campaign file in bench/results/.  docs/fuzzing.md says how to read and
# reproduce a finding.
#   scripts/fuzz.sh [HARNESS...]          (default: all; a name is fuzz_size or just size)
# Environment: FUZZ_SECONDS (10), FUZZ_RSS_MB (2048), FUZZ_TIMEOUT (25, seconds per input),
#              BUILD_FUZZ (build-fuzz).
# Runs use libFuzzer's fork mode, so that a run goes on after a crash, timeout or
# out-of-memory: every finding is saved as BUILD_FUZZ/artifacts/NAME-crash-* (or -timeout-*,
# -oom-*, -leak-*).  New inputs go to BUILD_FUZZ/corpus/NAME, never into the source tree.
# Exit status: 0 when no harness found anything, 1 otherwise, 2 when the build failed.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-10}
rss=${FUZZ_RSS_MB:-2048}
per_input=${FUZZ_TIMEOUT:-25}
build=${BUILD_FUZZ:-build-fuzz}
all=(size cli_opts jobfile exclude config_json trace strace journal replay_plan offload_trace lifetimes
	s3_response s3_agent)

if [ $# -gt 0 ]; then
	names=("${@#fuzz_}")
else
	names=("${all[@]}")
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DLLMIO_FUZZ=ON \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 2
fi
cmake --build "$build" --target fuzzers -j"$(nproc)" >/dev/null || exit 2
mkdir -p "$build/artifacts" "$build/logs" "$build/tmp"
# libFuzzer's fork-mode files and fuzz_trace's raw-file directory: inside the build directory,
# where what a killed child leaves behind is removed at the end
TMPDIR=$(cd "$build/tmp" && pwd)
export TMPDIR

rows=()
found=0
for n in "${names[@]}"; do
	if [ ! -x "$build/fuzz_$n" ]; then
		echo "fuzz: no harness fuzz_$n (have: ${all[*]})" >&2
		exit 2
	fi
	mkdir -p "$build/corpus/$n"
	log="$build/logs/$n.log"
	before=$(ls "$build/artifacts" | grep -c "^$n-" || true)
	echo "fuzz: fuzz_$n for ${secs}s (log: $log)" >&2
	dict=()
	[ -f "tests/fuzz/fuzz_$n.dict" ] && dict=(-dict="tests/fuzz/fuzz_$n.dict")
	start=$(date +%s)
	"$build/fuzz_$n" "${dict[@]}" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
		-max_total_time="$secs" -timeout="$per_input" -rss_limit_mb="$rss" \
		-artifact_prefix="$build/artifacts/$n-" "$build/corpus/$n" "tests/data/fuzz/$n" \
		>"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	# fork mode's stats line: #EXECS: cov: C ft: F corp: N exec/s R oom/timeout/crash: O/T/X
	last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
	execs=$(sed -nE 's/^#([0-9]+):.*/\1/p' <<<"$last")
	cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
	ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
	corp=$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<<"$last")
	rate=$(sed -nE 's/.* exec\/s ([0-9]+).*/\1/p' <<<"$last")
	otc=$(sed -nE 's/.* oom\/timeout\/crash: ([0-9]+\/[0-9]+\/[0-9]+).*/\1/p' <<<"$last")
	after=$(ls "$build/artifacts" | grep -c "^$n-" || true)
	new=$((after - before))
	if [ "$rc" -ne 0 ] || [ "$new" -gt 0 ] || { [ -n "$otc" ] && [ "$otc" != 0/0/0 ]; }; then
		found=1
	fi
	rows+=("| fuzz_$n | $took | ${execs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | ${corp:-?} | ${otc:-?} | $new |")
done

rm -rf "${build:?}/tmp"/*
echo
echo "| harness | seconds | executions | exec/s | cov | ft | corpus | oom/timeout/crash | new artifacts |"
echo "| --- | --: | --: | --: | --: | --: | --: | --: | --: |"
printf '%s\n' "${rows[@]}"
if [ "$found" -ne 0 ]; then
	echo
	echo "findings: $build/artifacts (reproduce: $build/fuzz_NAME FILE; docs/fuzzing.md)"
	ls "$build/artifacts"
fi
exit $found
