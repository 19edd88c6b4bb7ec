#!/bin/bash
# cli_output_width.sh: what a person reads fits a terminal and reads as words and units.
#
# Every command's default output (and --help) at a tiny scale, on the psync engine (model
# list/show with --tensors, engines, quick, sweep, advise, report, trace, replay, recipes):
#  - no line is longer than 100 columns;
#  - no figure in exponent notation (1.387e+10 B, 1.632e+04 us);
#  - the human tables name figures in words: no record key (load_time_s, clat_p99_ns ...) from
#    the list below.  JSON keeps those keys (checked elsewhere).
# Not here: `llmio run`'s job table, which has its own test (cli_fio_compat).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/.." && pwd)
DATA=$SRC/tests/data
# record and recipe-metric keys (src/workload/*.c, docs/output.md) that a table says in words
KEYS="load_time_s GBps cpu_s device_read_bytes duration_s throughput_min_rank_GBps
aggregate_GBps samples_per_s accelerator_utilisation compute_s data_stall_s checkpoint_stall_s
block_bytes blocks_per_s kv_tokens_restored_per_s restore_p50_us restore_p99_us spill_p99_us
step_s exposed_stall_s store_stall_s bytes_written bytes_read device_bytes_written
device_bytes_read peak_mem_keep peak_mem_offload prefetch_hits drive_writes_per_day
budget_bytes clat_p99_ns clat_p50_ns gb_per_s_per_core cores_busy system_cores_busy
iodepth_effective direct_in_effect"

# readable NAME FILE [keys]: FILE (the output of NAME) fits 100 columns, has no exponent and,
# with "keys", no record key.
readable() {
	local name=$1 file=$2 long e k bad=""
	long=$(awk 'length($0) > 100 { printf "line %d (%d columns): %s\n", NR, length($0), $0 }' \
		"$file" | head -n 3)
	if [ -n "$long" ]; then fail "$name: lines over 100 columns: $long"; else pass "$name: 100 columns"; fi
	e=$(grep -nE '[0-9]e[+-][0-9]' "$file" | head -n 3)
	if [ -n "$e" ]; then fail "$name: exponent notation: $e"; else pass "$name: no exponent"; fi
	[ "${3:-}" = keys ] || return 0
	for k in $KEYS; do
		grep -qw -- "$k" "$file" && bad="$bad $k"
	done
	if [ -n "$bad" ]; then fail "$name: record keys in a human table:$bad"; else pass "$name: words, not keys"; fi
}

# out NAME ARGS...: runs llmio ARGS (exit 0 expected) and checks stdout and stderr.
out() {
	local name=$1; shift
	expect_rc 0 "$name" "$@" || return 0
	cat "$T/stdout" "$T/stderr" >"$T/both"
	readable "$name" "$T/both" keys
}

echo "== the checks themselves catch what they look for"
printf '%101s\n' x | tr ' ' y >"$T/wide"
printf 'size 1.387e+10 B\n' >"$T/exp"
printf '  load_time_s    0.28 s\n' >"$T/key"
for f in wide exp key; do
	before=$FAILS
	readable "self-test $f" "$T/$f" keys >/dev/null
	if [ "$FAILS" -gt "$before" ]; then
		FAILS=$before
		pass "self-test: $f is caught"
	else
		fail "self-test: $f is not caught"
	fi
done

echo "== --help of every command"
for c in "" engines quick model "model list" "model show" report advise results "results export" \
	trace "trace report" replay sweep; do
	# shellcheck disable=SC2086 # the words of c are the command's
	expect_rc 0 "llmio $c --help" $c --help || continue
	readable "llmio $c --help" "$T/stdout"
done
expect_rc 0 "run --workload (the list)" run --workload help
readable "run --workload (the list)" "$T/stdout"
for w in load pretrain ckpt finetune infer replay offload migrate; do
	expect_rc 0 "run --workload $w --help" run --workload "$w" --help || continue
	readable "run --workload $w --help" "$T/stdout"
done

echo "== engines, models"
out "engines" engines
out "engines --brief" engines --brief
out "model list" model list
for m in $("$LLMIO" model list | awk 'NR > 1 && $2 ~ /^[0-9]+$/ { print $1 }'); do
	out "model show $m" model show "$m"
	out "model show $m --tensors" model show "$m" --tensors
done
mkdir -p "$T/gemma" && cp "$DATA/gemma-2-9b.json" "$T/gemma/config.json"
out "model show (a config.json) --tensors" model show "$T/gemma" --tensors

echo "== quick"
out "quick" quick --dir "$T/q" --size 16m --runtime 100ms

echo "== sweep (a point per line, the dry run's plan, the adaptive answers)"
cat >"$T/w.ini" <<'INI'
[global]
filename=w.dat
size=4m
runtime=100ms
rw=randread
bs=4k,64k
iodepth=1,8
[psync]
ioengine=psync
[a-long-section-name-that-would-push-a-point-line-past-the-edge-of-a-terminal]
ioengine=null
INI
mkdir -p "$T/s"
out "sweep --dry-run" sweep "$T/w.ini" --dry-run --dir "$T/s"
out "sweep" sweep "$T/w.ini" -o "$T/w.jsonl" --dir "$T/s"
out "sweep --adaptive" sweep "$T/w.ini" --adaptive -o "$T/wa.jsonl" --dir "$T/s"

echo "== advise and report on the fixture journals"
for j in sweep thin classes; do
	out "advise $j" advise "$DATA/$j.jsonl"
done
out "report" report "$DATA/sweep.jsonl" -o "$T/rep" --no-charts

echo "== trace, its report, replay"
mkdir -p "$T/deep/directory/names/that/make/a/path/longer/than/a/column"
out "trace" trace -o "$T/t.trace" -- sh -c "
	dd if=/dev/zero of=$T/deep/directory/names/that/make/a/path/longer/than/a/column/data \
		bs=64k count=16 status=none
	cat $T/deep/directory/names/that/make/a/path/longer/than/a/column/data >/dev/null"
out "trace report" trace report "$T/t.trace"
out "trace import-strace" trace import-strace "$DATA/strace_sample.log" -o "$T/s.trace"
out "trace report (strace)" trace report "$T/s.trace"
mkdir -p "$T/w"
out "replay" replay "$T/t.trace" --dir "$T/w" --engine psync

echo "== the workload recipes"
W=(--directory "$T/w" --engine psync --direct 0)
out "load" run --workload load --model gpt2 --scale 0.02 "${W[@]}"
out "pretrain" run --workload pretrain --model gpt2 --scale 0.05 --record 64k --batch 2 \
	--steps 2 --compute 1ms --ckpt_every 2 --dp 1 "${W[@]}"
out "ckpt" run --workload ckpt --model gpt2 --scale 0.005 --dp 2 --ranks 2 "${W[@]}"
out "finetune" run --workload finetune --model gpt2 --scale 0.02 --record 16k --batch 2 \
	--steps 1 --compute 1ms --ckpt_every 1 "${W[@]}"
out "infer" run --workload infer --model Llama-3.1-8B --scale 0.001 --duration 200ms \
	--in_flight 2 --load 0 "${W[@]}"
out "offload" run --workload offload --model gpt2 --steps 1 --layers 2 --fwd_ms 2 \
	--scale 0.01 "${W[@]}"
out "migrate --simulate" run --workload migrate --model gpt2 --budget 100m --simulate
out "ckpt on two engines side by side" run --workload ckpt --model gpt2 --scale 0.002 --dp 2 \
	--ranks 2 --directory "$T/w" --engine all --direct 0

finish
