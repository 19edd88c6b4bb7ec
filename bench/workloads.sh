#!/bin/bash
# Every workload recipe at a documented scale on every engine that can run here, side by side
# (llmio run --workload NAME --engine all).  Prints the per-phase tables; docs/performance.md
# ("Workload recipes") keeps a run of it.
#
#   bench/workloads.sh [LLMIO] [DIR]      (defaults: build/llmio, ./llmio-bench-workloads)
#
# The scale keeps each recipe to seconds on a small machine: the request sizes and patterns
# are the model's, the bytes are a fraction of them.  DIR must be on the storage to measure
# (not tmpfs: O_DIRECT and the device counters need a block device).  DIR is removed at the end.
set -eu
LLMIO=${1:-build/llmio}
DIR=${2:-./llmio-bench-workloads}
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT

run() {
	echo
	echo "### llmio run $*"
	echo
	echo '```'
	"$LLMIO" run "$@" --directory "$DIR" --engine all
	echo '```'
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n): $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
run --workload load --model Llama-3.2-1B --scale 0.25 --strategy all --cache both
run --workload ckpt --model Llama-3.1-8B --scale 0.01 --dp 8 --zero 3
run --workload pretrain --model Llama-3.2-1B --dataset tokens --steps 20 --compute 20ms \
	--ckpt_every 10 --dp 8 --ranks 8 --scale 0.02
run --workload finetune --model Llama-3.2-1B --scale 0.1 --steps 10 --compute 10ms \
	--ckpt_every 5 --save lora
run --workload infer --model Llama-3.1-8B --scale 0.25 --duration 3s --load 0 \
	--in_flight 16 --hit_ratio 70
