#!/bin/bash
# Recipe parameters are checked against the ranges in each recipe's parameter table by one
# parser (base/optdesc.c): an out-of-range or malformed value is refused before any I/O with
# one line naming the parameter, its range and an example.
. "$(dirname "$0")/lib.sh"

D=$T/wl
mkdir -p "$D"

refused() { # DESC "TEXT" ARGS...: exit 2, one line, containing TEXT
	local desc=$1 text=$2; shift 2
	expect_rc 2 "$desc" run --directory "$D" --quiet "$@" &&
		expect_err "$desc names the range" "$text"
}

refused "load --threads 0" "--threads=0 is out of range: it takes 1..64 (e.g. --threads=4)" \
	--workload load --model gpt2 --threads 0
refused "load --bs 1k" "--bs=1k is out of range: it takes 4k..64m" \
	--workload load --model gpt2 --bs 1k
refused "pretrain --bs 128m" "--bs=128m is out of range: it takes 512..64m" \
	--workload pretrain --model gpt2 --bs 128m
refused "pretrain --steps 0" "--steps=0 is out of range: it takes >= 1" \
	--workload pretrain --model gpt2 --steps 0
refused "ckpt --zero 4" "--zero=4 is out of range: it takes 0..3" \
	--workload ckpt --model gpt2 --zero 4
refused "ckpt --repeat 21" "--repeat=21 is out of range: it takes 1..20" \
	--workload ckpt --model gpt2 --repeat 21
refused "ckpt degrees whose product is too large" "at most 4096 ranks" \
	--workload ckpt --model gpt2 --tp 64 --pp 64 --dp 2
refused "finetune --lora_rank 5000" "--lora_rank=5000 is out of range: it takes 1..4096" \
	--workload finetune --model gpt2 --lora_rank 5000
refused "infer --hit_ratio 101" "--hit_ratio=101 is out of range: it takes 0..100" \
	--workload infer --model gpt2 --hit_ratio 101
refused "infer --in_flight 0" "--in_flight=0 is out of range: it takes 1..4096" \
	--workload infer --model gpt2 --in_flight 0
refused "replay --bs 1k" "--bs=1k is out of range: it takes 4k..64m" \
	--workload replay --trace "$T/none" --bs 1k
refused "a malformed number" "--tp=abc is not a whole number (e.g. --tp=1)" \
	--workload ckpt --model gpt2 --tp abc
refused "a malformed size" "--bs=lots is not a size" --workload load --model gpt2 --bs lots
refused "a negative scale" "--scale=-1 is out of range: it takes >= 0" \
	--workload load --model gpt2 --scale=-1
refused "a scale that is not a number" "--scale=x is not a number" \
	--workload load --model gpt2 --scale=x
refused "load --cache outside its choices" "--cache=hot is not one of both|cold|warm" \
	--workload load --model gpt2 --cache hot
refused "finetune --save outside its choices" "--save=all is not one of lora|full" \
	--workload finetune --model gpt2 --save all
# the bounds themselves are accepted (nothing written: --help after the values)
llmio run --workload load --model gpt2 --threads 64 --bs 64m --help
check "the range's bounds are accepted" test "$RC" -eq 0
finish
