#!/bin/bash
# Workload recipes at a tiny scale on every engine that can run here: each phase moves
# exactly the bytes the recipe promised, checked against the files on disk and the model's
# arithmetic; accelerator utilisation on a synthetic stall; errors and exit codes.
. "$(dirname "$0")/lib.sh"

D=$T/wl
mkdir -p "$D"
engines=()
for e in psync libaio io_uring mmap; do
	"$LLMIO" engines 2>/dev/null | grep -q "^$e  *available" && engines+=("$e")
done
[ ${#engines[@]} -gt 0 ] || engines=(psync)
note "engines: ${engines[*]}"

disk_sum() { stat -c %s "$@" | awk '{s += $1} END {print s}'; }

for e in "${engines[@]}"; do
	expect_rc 0 "ckpt on $e" run --workload ckpt --model gpt2 --directory "$D" \
		--scale 0.005 --dp 2 --ranks 2 --engine "$e" --quiet --keep --json "$T/ckpt.json"
	want=$(disk_sum "$D"/llmio-work/ckpt-rank*.pt)
	json_check "$T/ckpt.json" "ckpt/$e: save writes exactly the shards on disk ($want B)" \
		"sum(j['write']['io_bytes'] for j in d['runs'][0]['phases'][0]['jobs']) == $want"
	json_check "$T/ckpt.json" "ckpt/$e: restore reads exactly them back" \
		"sum(j['read']['io_bytes'] for j in d['runs'][0]['phases'][1]['jobs']) == $want"
	json_check "$T/ckpt.json" "ckpt/$e: promised = moved, fsynced, 2 ranks" \
		"d['runs'][0]['phases'][0]['promised_bytes'] == $want and d['runs'][0]['phases'][0]['jobs'][0]['sync']['total_ios'] == 2 and d['runs'][0]['phases'][0]['metrics']['ranks'] == 2"

	expect_rc 0 "load (sequential, parallel) on $e" run --workload load --model gpt2 \
		--directory "$D" --scale 0.02 --strategy sequential --cache cold --engine "$e" \
		--quiet --keep --json "$T/load.json"
	want=$(disk_sum "$D"/llmio-work/model*.safetensors)
	json_check "$T/load.json" "load/$e: reads every byte of the shard files ($want B)" \
		"d['runs'][0]['phases'][0]['jobs'][0]['read']['io_bytes'] == $want"

	expect_rc 0 "pretrain on $e" run --workload pretrain --model gpt2 --directory "$D" \
		--scale 0.05 --record 64k --batch 2 --steps 4 --compute 1ms --ckpt_every 2 \
		--dp 1 --engine "$e" --quiet --json "$T/pt.json"
	json_check "$T/pt.json" "pretrain/$e: reads steps x batch x record, 2 checkpoints" \
		"d['runs'][0]['phases'][0]['jobs'][0]['read']['io_bytes'] == 4*2*65536 and [p['name'] for p in d['runs'][0]['phases']] == ['train', 'checkpoint@step2', 'checkpoint@step4']"
done

# GPU engines on the fake CUDA libraries the tests build (host memory stands in for the GPU):
# weights load straight into "GPU" buffers and checkpoints are written from them.
FAKE=$(dirname "$LLMIO")/tests/fake_cuda
if [ -e "$FAKE/libcufile.so.0" ]; then
	export LLMIO_CUDART="$FAKE/libcudart.so.12" LLMIO_CUFILE="$FAKE/libcufile.so.0"
	export LLMIO_FAKE_CUDA=1
	for e in gds cuda-bounce; do
		expect_rc 0 "ckpt from GPU memory on $e" run \
			--workload ckpt --model gpt2 --directory "$D" --scale 0.005 --dp 2 --ranks 2 \
			--engine "$e" --quiet --keep --json "$T/gck.json"
		want=$(disk_sum "$D"/llmio-work/ckpt-rank*.pt)
		json_check "$T/gck.json" "ckpt/$e writes and restores exactly the shards" \
			"sum(j['write']['io_bytes'] for j in d['runs'][0]['phases'][0]['jobs']) == $want == sum(j['read']['io_bytes'] for j in d['runs'][0]['phases'][1]['jobs'])"
		expect_rc 0 "load into GPU memory on $e" run \
			--workload load --model gpt2 --directory "$D" --scale 0.02 \
			--strategy sequential --cache cold --engine "$e" --quiet --keep --json "$T/gld.json"
		want=$(disk_sum "$D"/llmio-work/model*.safetensors)
		json_check "$T/gld.json" "load/$e reads every byte of the shards" \
			"d['runs'][0]['phases'][0]['jobs'][0]['read']['io_bytes'] == $want"
	done
	unset LLMIO_CUDART LLMIO_CUFILE LLMIO_FAKE_CUDA
else
	note "no fake CUDA libraries in $FAKE: GPU workload checks skipped"
fi

# LoRA adapter of GPT-2, r=16 on q,v: the fused c_attn counts once per layer:
# 12 layers x 16 x (768 + 2304) = 589,824 parameters x 4 bytes (fp32) = 2,359,296 bytes.
expect_rc 0 "finetune with LoRA saves" run --workload finetune --model gpt2 --directory "$D" \
	--scale 0.02 --record 16k --batch 2 --steps 2 --compute 1ms --ckpt_every 1 --direct 0 \
	--engine psync --quiet --json "$T/ft.json"
json_check "$T/ft.json" "finetune: each adapter save writes r(in+out) x layers x 4 B" \
	"[p['jobs'][0]['write']['io_bytes'] for p in d['runs'][0]['phases'][2:]] == [2359296, 2359296]"
json_check "$T/ft.json" "finetune: phases load, train, 2 saves" \
	"[p['name'] for p in d['runs'][0]['phases']] == ['load', 'train', 'checkpoint@step1', 'checkpoint@step2']"

# KV block of Llama-3.1-8B, 16 tokens, bf16: 2 x 32 x 8 x 128 x 2 x 16 = 2 MiB.
expect_rc 0 "infer serves KV blocks" run --workload infer --model Llama-3.1-8B \
	--directory "$D" --scale 0.001 --load 0 --duration 1s --in_flight 4 --engine psync \
	--quiet --json "$T/inf.json"
json_check "$T/inf.json" "infer: I/O size is the model's KV block (2 MiB)" \
	"d['runs'][0]['phases'][0]['metrics']['block_bytes'] == 2097152 and d['runs'][0]['phases'][0]['jobs'][0]['job options']['bs'] == 2097152"

# Accelerator utilisation: readers limited to 1 MB/s must starve a 5 ms step of 128 KiB,
# AU = compute / (total - first step's wait) far below 1; unthrottled, AU is close to 1.
expect_rc 0 "pretrain with a synthetic stall" run --workload pretrain --model gpt2 \
	--directory "$D" --scale 0.05 --record 64k --batch 2 --steps 4 --compute 5ms \
	--ckpt_every 0 --readers 1 --rate 1m --direct 0 --engine psync --quiet --json "$T/au.json"
json_check "$T/au.json" "AU under a 1 MB/s stall is compute/(compute+stall) < 0.2" \
	"0 < d['runs'][0]['phases'][0]['metrics']['accelerator_utilisation'] < 0.2 and abs(d['runs'][0]['phases'][0]['metrics']['compute_s'] - 0.02) < 1e-9"
expect_rc 0 "pretrain without a stall" run --workload pretrain --model gpt2 \
	--directory "$D" --scale 0.05 --record 4k --batch 2 --steps 4 --compute 50ms \
	--ckpt_every 0 --direct 0 --engine psync --quiet --json "$T/au2.json"
# the rule, on any machine: the readers' stall lowers AU; how close to 1 an unthrottled run
# gets depends on the CPUs the readers find free, so that figure is a performance check
check "AU without a stall is above AU under the 1 MB/s stall" python3 -c "
import json, sys
au = [json.load(open(p))['runs'][0]['phases'][0]['metrics']['accelerator_utilisation'] for p in sys.argv[1:]]
sys.exit(0 if au[1] > au[0] else 1)" "$T/au.json" "$T/au2.json"
if perf_mode; then
	json_check "$T/au2.json" "AU without a stall is above 0.9" \
		"d['runs'][0]['phases'][0]['metrics']['accelerator_utilisation'] > 0.9"
fi

# --engine all: one run per engine, side by side
expect_rc 0 "--engine all" run --workload ckpt --model gpt2 --directory "$D" --scale 0.002 \
	--dp 1 --engine all
expect_out "side-by-side table" "phase time and rate by engine"

# a sweep over recipes: every point's record carries the recipe's phases; advise reads them
cat >"$T/phases.ini" <<INI
[global]
model=gpt2
scale=0.005
direct=0
ioengine=psync,io_uring
[ckpt]
workload=ckpt
dp=2
ranks=1,2
INI
expect_rc 0 "sweep over a recipe" sweep "$T/phases.ini" -o "$T/ph.jsonl" --dir "$D" --quiet
check "4 records" test "$(wc -l <"$T/ph.jsonl")" -eq 4
check "records hold the recipe's phases" /usr/bin/env python3 -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["workload"] == "ckpt" and [p["name"] for p in r["phases"]] == ["save", "save-restore"] for r in rs), rs
assert sorted(r["config"]["ranks"] for r in rs) == [1, 1, 2, 2], [r["config"] for r in rs]
' "$T/ph.jsonl"
expect_rc 0 "advise on recipe records" advise "$T/ph.jsonl"
expect_out "checkpointing decided from recipe phases" "checkpointing"

# a checkpoint that fails mid-training ends the run with its error; the readers do not hang
# (llmio-work is llmio's own directory: made here by hand, with llmio's marker)
mkdir -p "$T/bad/llmio-work/pretrain-ckpt-rank00000.pt"
touch "$T/bad/llmio-work/.llmio-owned"
expect_rc 2 "failing checkpoint stops training cleanly" run --workload pretrain --model gpt2 \
	--directory "$T/bad" --scale 0.05 --record 64k --batch 2 --steps 6 --compute 1ms \
	--ckpt_every 2 --dp 1 --ranks 1 --engine psync --direct 0 --quiet
expect_err "names the file in the way" "pretrain-ckpt-rank00000.pt is not a regular file"

# errors
expect_rc 2 "unknown workload" run --workload nope --directory "$D"
expect_rc 2 "unknown model" run --workload load --model nope --directory "$D"
expect_err "names the model and the fix" "nope" "llmio model list"
expect_rc 2 "missing model" run --workload ckpt --directory "$D"
expect_rc 2 "unknown parameter" run --workload ckpt --model gpt2 --directory "$D" --bogus 1
expect_err "lists the parameters" "ranks"
expect_rc 2 "bad scale" run --workload ckpt --model gpt2 --directory "$D" --scale 2
expect_rc 2 "no directory" run --workload ckpt --model gpt2
expect_rc 1 "not enough space" run --workload ckpt --model Llama-3.1-405B --directory "$D" \
	--tp 8 --pp 8 --dp 1 --ranks 1
expect_err "says how much is needed" "needs" "GB more space" "--scale"
llmio run --workload ckpt --help
check "recipe --help lists its parameters with defaults" grep -q "default 8" "$T/stdout"
finish
