#!/usr/bin/env bash
# The tracer on a small suite of real ML programs (Debian's python3-torch, CPU; nothing
# downloaded): its reports, and its overhead on each.
#   - loader: PyTorch's DataLoader, 2 worker processes, over 2,000 files of 4-64 KiB
#     (bench/trace_programs/loader.py);
#   - train: torch.load of a model, 2 epochs over 96 sample files with 2 workers, torch.save
#     checkpoints fsynced and renamed (bench/trace_torch.py);
#   - shards: a 96 MiB model saved in 4 safetensors-format shards and loaded back tensor by
#     tensor (bench/trace_programs/shards.py).
#
#   bench/trace_suite.sh [-o OUT] [--runs N] [LLMIO_BINARY]   (OUT: bench-trace-suite, N: 7)
#
# For each program: N runs untraced and N traced, interleaved (untraced first, then traced,
# alternating, so drift hits both), the median wall time of each and the overhead as their
# ratio; then one more traced run's `llmio trace report` as OUT/NAME.txt and OUT/NAME/ (its
# report.html and charts).  Prints one markdown table.  Not part of `make test`: timings need
# a quiet machine (docs/tracing.md, "Accuracy and overhead"; the target is at most 5 %).
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-trace-suite
runs=7
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	*) break ;;
	esac
done
LLMIO=$(realpath "${1:-build/llmio}")
PY=/usr/bin/python3
[ -x "$LLMIO" ] || { echo "build llmio first (make build): $LLMIO is missing" >&2; exit 2; }
"$PY" -c 'import torch' 2>/dev/null ||
	{ echo "no torch for $PY: scripts/bootstrap.sh installs python3-torch" >&2; exit 2; }
mkdir -p "$out"
W=$(mktemp -d "${TMPDIR:-/tmp}/llmio-trace-suite.XXXXXX")
trap 'rm -rf "$W"' EXIT

# seconds ARGS...: wall seconds of one run of ARGS (output discarded)
seconds() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "| program | untraced (median of $runs) | traced | overhead | calls traced | report |"
echo "| --- | --- | --- | --- | --- | --- |"
for name in loader train shards; do
	case $name in
	loader) script=bench/trace_programs/loader.py ;;
	train) script=bench/trace_torch.py ;;
	shards) script=bench/trace_programs/shards.py ;;
	esac
	dir=$W/$name
	mkdir -p "$dir"
	prog=(env OMP_NUM_THREADS=1 "$PY" "$PWD/$script" "$dir")
	"${prog[@]}" setup >/dev/null
	: >"$W/plain" && : >"$W/traced"
	for _ in $(seq "$runs"); do
		seconds "${prog[@]}" run >>"$W/plain"
		seconds "$LLMIO" trace -q -o "$W/$name.trace" -- "${prog[@]}" run >>"$W/traced"
		rm -f "$W/$name.trace"
	done
	p=$(median <"$W/plain")
	t=$(median <"$W/traced")
	"$LLMIO" trace -q -o "$W/$name.trace" -- "${prog[@]}" run >/dev/null
	"$LLMIO" trace report "$W/$name.trace" -o "$out/$name" >"$out/$name.txt"
	calls=$("$LLMIO" trace report "$W/$name.trace" --json | "$PY" -c \
		'import json, sys; print(json.load(sys.stdin)["totals"]["calls"])')
	printf '| %s | %.3f s | %.3f s | %+.1f %% | %s | %s |\n' "$name" "$p" "$t" \
		"$(echo "100 * ($t - $p) / $p" | bc -l)" "$calls" "$out/$name.txt"
done
