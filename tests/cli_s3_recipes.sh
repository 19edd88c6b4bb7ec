#!/usr/bin/env bash
# Recipes on object targets (issue 19, "Workloads") against a real S3 server (s3rver or fauxqs,
# started here on loopback): load reads the model's safetensors shards as objects (uploaded when
# absent), pretrain reads samples as objects (one per sample, or tar-like shards), ckpt writes
# its ranks' shards as multipart uploads from one thread per rank; --engine all runs the object
# engines beside the file engines (on a staging directory, said so).  Exact byte totals (the
# sum of the objects' sizes as the server lists them), exact request and part counts, what is
# left in the bucket, and the errors a user meets, each one line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3_server.sh"

on_exit() { s3_stop; }
s3_start llmio

disk_sum() { stat -c %s "$@" | awk '{s += $1} END {print s}'; }
P='d["runs"][0]["phases"]'

# --- load: the shards as objects -------------------------------------------------------------
expect_rc 0 "load from a bucket: every strategy, cold" run --workload load --model gpt2 \
	--directory s3://llmio/m --engine s3 --scale 0.02 --cache cold --keep --quiet \
	--json "$T/load.json"
read -r n want <<<"$(obj_list m/llmio-work/)"
check "the shards were uploaded as objects (1 of them, $want B)" test "$n" = 1 -a "$want" -gt 0
json_check "$T/load.json" "the phases: sequential, tensor, mmap, parallel" \
	"[p['name'] for p in $P] == ['load-sequential-cold', 'load-tensor-cold', 'load-mmap-cold', 'load-parallel-cold']"
json_check "$T/load.json" "sequential and parallel read exactly the objects' bytes ($want B)" \
	"$P[0]['jobs'][0]['read']['io_bytes'] == $want and $P[3]['jobs'][0]['read']['io_bytes'] == $want"
json_check "$T/load.json" "sequential: one Range GET per 4 MiB piece of each object" \
	"$P[0]['jobs'][0]['wire']['requests'] == -(-$want // 4194304) and $P[0]['metrics']['requests'] == $P[0]['jobs'][0]['wire']['requests']"
json_check "$T/load.json" "tensor reads exactly the 8 bytes, the header and every tensor" \
	"$P[1]['jobs'][0]['read']['io_bytes'] == $P[1]['promised_bytes'] == $want and $P[1]['jobs'][0]['wire']['requests'] > $P[0]['jobs'][0]['wire']['requests']"
json_check "$T/load.json" "parallel: 4 threads" "$P[3]['jobs'][0]['job options']['numjobs'] == 4"
json_check "$T/load.json" "mmap maps files: its phase has no stream and says why" \
	"not $P[2]['jobs'] and 'mmap maps files' in $P[2]['note']"
json_check "$T/load.json" "bytes on the wire and the client CPU split in every phase's metrics" \
	"all(m['wire_rx_bytes'] > p['jobs'][0]['read']['io_bytes'] and m['client_cpu_s_per_GB'] > 0 and m['copy_s'] > 0 and m['hash_s'] == 0 and 'softirq_system_s' in m for p in $P if p['jobs'] for m in [p['metrics']])"
json_check "$T/load.json" "O_DIRECT off for objects; the last phase says what is left" \
	"not d['runs'][0]['direct'] and 'objects: 1 created under s3://llmio/m/llmio-work/' in $P[-1]['note'] and 'left in the bucket (--keep)' in $P[-1]['note']"
expect_rc 0 "the same load on files" run --workload load --model gpt2 --directory "$T" \
	--engine psync --scale 0.02 --strategy sequential --cache cold --keep --quiet
check "the objects are the shard files' sizes" test "$(disk_sum "$T"/llmio-work/model*.safetensors)" = "$want"
expect_rc 0 "load again: the objects are read as they are" run --workload load --model gpt2 \
	--directory s3://llmio/m --engine s3 --scale 0.02 --strategy sequential --cache both \
	--quiet --json "$T/load2.json"
json_check "$T/load2.json" "nothing uploaded, the object there before left as it was" \
	"'objects: none created' in $P[-1]['note'] and '1 there before left as they were' in $P[-1]['note']"
json_check "$T/load2.json" "warm says that it is cold here" \
	"'warm is cold here' in $P[1]['note']"
check "...and it is still there" test "$(obj_list m/llmio-work/)" = "1 $want"
expect_rc 0 "load into a fresh prefix without --keep" run --workload load --model gpt2 \
	--directory s3://llmio/gone/ --engine s3 --scale 0.02 --strategy tensor --cache cold \
	--quiet --json "$T/load3.json"
json_check "$T/load3.json" "it says it removed what it created" \
	"'1 created under s3://llmio/gone/llmio-work/' in $P[-1]['note'] and '1 removed at the end' in $P[-1]['note']"
check "...and the bucket has nothing left under it" test "$(obj_list gone/)" = "0 0"

# into GPU memory: cuda-bounce host=s3 under the strict fake CUDA libraries (tests/cli_s3_gpu.sh)
FAKE=$(cd "$(dirname "$LLMIO")/tests/fake_cuda" 2>/dev/null && pwd) || FAKE=
if [ -n "$FAKE" ] && [ -f "$FAKE/libcudart.so.12" ]; then
	LLMIO_CUDART=$FAKE/libcudart.so.12 LLMIO_FAKE_CUDA=1 LLMIO_FAKE_STRICT=1 expect_rc 0 \
		"load from the bucket into GPU memory (cuda-bounce --host=s3)" run --workload load \
		--model gpt2 --directory s3://llmio/m --engine cuda-bounce --host=s3 --scale 0.02 \
		--strategy sequential --cache cold --quiet --json "$T/gpu.json"
	json_check "$T/gpu.json" "every byte of the shard objects, copied host-to-device, with wire figures" \
		"$P[0]['jobs'][0]['read']['io_bytes'] == $want and 'host-to-device' in $P[0]['jobs'][0]['engine_notes'] and $P[0]['metrics']['wire_rx_bytes'] > $want"
else
	note "no fake CUDA libraries next to $LLMIO: the GPU landing of a recipe is not checked"
fi

# --- ckpt: multipart uploads, one writer thread per rank --------------------------------------
expect_rc 0 "ckpt to a bucket: 2 ranks" run --workload ckpt --model gpt2 --directory \
	s3://llmio/ck --engine s3 --scale 0.03 --dp 2 --ranks 2 --keep --quiet --json "$T/ck.json"
read -r n want <<<"$(obj_list ck/llmio-work/ckpt-rank)"
each=$((want / 2))
parts=$(((each + 8388607) / 8388608))
check "2 rank objects of more than 8 MiB ($want B)" test "$n" = 2 -a "$each" -gt 8388608
json_check "$T/ck.json" "save wrote exactly the objects' bytes, restore read them back" \
	"$P[0]['jobs'][0]['write']['io_bytes'] == $want and $P[1]['jobs'][0]['read']['io_bytes'] == $want"
json_check "$T/ck.json" "multipart: initiate + $parts parts of 8 MiB + complete, per object" \
	"$P[0]['jobs'][0]['wire']['requests'] == 2 * ($parts + 2) and $P[0]['jobs'][0]['job options']['bs'] == 8388608 and '8 MiB parts' in $P[0]['note']"
json_check "$T/ck.json" "two writer threads, each its own object" \
	"$P[0]['jobs'][0]['job options']['numjobs'] == 2 and $P[0]['metrics']['ranks'] == 2"
json_check "$T/ck.json" "restore: 1 MiB Range GETs" \
	"$P[1]['jobs'][0]['wire']['requests'] == 2 * -(-$each // 1048576)"
expect_rc 0 "ckpt again over the objects it kept, without --keep" run --workload ckpt \
	--model gpt2 --directory s3://llmio/ck --engine s3 --scale 0.03 --dp 2 --ranks 2 --quiet \
	--json "$T/ck2.json"
json_check "$T/ck2.json" "none created: the 2 there before rewritten and kept" \
	"'objects: none created' in $P[-1]['note'] and '2 there before rewritten and kept' in $P[-1]['note']"
check "...and both are still there" test "$(obj_list ck/llmio-work/ckpt-rank)" = "2 $want"
expect_rc 0 "ckpt with 5 MiB parts, without --keep" run --workload ckpt --model gpt2 \
	--directory s3://llmio/ck5 --engine s3 --scale 0.03 --dp 2 --ranks 2 --bs 5m --quiet \
	--json "$T/ck5.json"
parts=$(((each + 5242879) / 5242880))
json_check "$T/ck5.json" "initiate + $parts parts of 5 MiB + complete, no note on parts" \
	"$P[0]['jobs'][0]['wire']['requests'] == 2 * ($parts + 2) and 'MiB parts' not in $P[0]['note']"
json_check "$T/ck5.json" "both rank objects removed at the end" "'2 removed at the end' in $P[-1]['note']"
check "...and none is left" test "$(obj_list ck5/)" = "0 0"

# --- pretrain: samples as objects -----------------------------------------------------------
TRAIN=(--model gpt2 --engine s3 --files 2 --samples_per_file 4 --record 64k --batch 2 --steps 4
	--compute 1ms --ckpt_every 0 --keep --quiet)
expect_rc 0 "pretrain: one object per sample" run --workload pretrain "${TRAIN[@]}" \
	--directory s3://llmio/ds --layout sample --json "$T/ps.json"
check "8 sample objects of 64 KiB" test "$(obj_list ds/llmio-work/sample-)" = "8 524288"
json_check "$T/ps.json" "4 steps x 2 samples x 64 KiB read, one GET per sample" \
	"$P[0]['jobs'][0]['read']['io_bytes'] == 8 * 65536 and $P[0]['metrics']['requests'] == 8 and $P[0]['metrics']['steps'] == 4"
expect_rc 0 "pretrain: tar-like shards" run --workload pretrain "${TRAIN[@]}" \
	--directory s3://llmio/ds --layout tar --json "$T/pt.json"
check "2 shard objects: 4 x (512 + 64 KiB) + 1024 each" \
	test "$(obj_list ds/llmio-work/data-)" = "2 $((2 * (4 * (512 + 65536) + 1024)))"
json_check "$T/pt.json" "each sample read with its 512-byte header, one GET each" \
	"$P[0]['jobs'][0]['read']['io_bytes'] == 8 * (512 + 65536) == $P[0]['promised_bytes'] and $P[0]['metrics']['requests'] == 8"

expect_rc 0 "finetune: the model, the dataset, an adapter save, all objects" run --workload \
	finetune --model gpt2 --directory s3://llmio/ft --engine s3 --scale 0.02 --files 1 \
	--samples_per_file 4 --record 64k --batch 2 --steps 2 --compute 1ms --ckpt_every 2 \
	--quiet --json "$T/ft.json"
json_check "$T/ft.json" "load, train, checkpoint; the 3 objects it made removed at the end" \
	"[p['name'] for p in $P] == ['load', 'train', 'checkpoint@step2'] and $P[1]['jobs'][0]['read']['io_bytes'] == 4 * 65536 and '3 created' in $P[-1]['note'] and '3 removed at the end' in $P[-1]['note']"
check "...and none is left" test "$(obj_list ft/)" = "0 0"

# --- --engine all: the object engines beside the file engines --------------------------------
mkdir -p "$T/stage"
expect_rc 0 "--engine all on an s3:// target" run --workload ckpt --model gpt2 --directory \
	s3://llmio/all --engine all --scale 0.005 --dp 2 --ranks 2 --staging "$T/stage" \
	--direct 0 --json "$T/all.json"
json_check "$T/all.json" "s3 and s3-agent first, then psync" \
	"[r['engine'] for r in d['runs']][:3] == ['s3', 's3-agent', 'psync']"
json_check "$T/all.json" "every engine wrote the same shard bytes (--direct 0: no 4 KiB rounding)" \
	"len({r['phases'][0]['jobs'][0]['write']['io_bytes'] for r in d['runs']}) == 1"
json_check "$T/all.json" "the file engines say they ran on the staging directory" \
	"all('ran against the local staging directory $T/stage/llmio-work, not s3://llmio/all' in p['note'] for r in d['runs'][2:] for p in r['phases'])"
json_check "$T/all.json" "the object engines carry wire figures, the file engines device bytes" \
	"all('wire_tx_bytes' in r['phases'][0]['metrics'] for r in d['runs'][:2]) and all('wire_tx_bytes' not in r['phases'][0]['metrics'] and 'client_cpu_s_per_GB' in r['phases'][0]['metrics'] for r in d['runs'][2:])"
check "the phase-by-engine table lines them up" grep -q "phase time and rate by engine" "$T/stdout"
cpu_table() { grep -A2 "client CPU seconds per GB by engine" "$T/stdout" | grep -Eq "^  save +[0-9.]+ +[0-9.]+ +[0-9.]+"; }
check "...and the client CPU per GB of each" cpu_table
# (a long line wraps, and a long path is shortened with an ellipsis: match the words and its tail)
check "the staging files the file engines made are removed, and said so" \
	bash -c "! test -e '$T/stage/llmio-work/ckpt-rank00000.pt' && tr -s ' \\n' ' ' <'$T/stdout' | grep -Eq 'removed [0-9]+ files?, .* from [^ ]*stage/llmio-work'"
expect_rc 0 "--engine all with --keep" run --workload ckpt --model gpt2 --directory \
	s3://llmio/all --engine all --scale 0.005 --dp 2 --ranks 2 --staging "$T/stage" \
	--direct 0 --keep --quiet
check "...leaves the staging shards" test -f "$T/stage/llmio-work/ckpt-rank00000.pt"

# --- several threads write objects through the s3 engine --------------------------------------
expect_rc 0 "4 threads write 4 objects at once" run --engine s3 --directory s3://llmio/mt \
	--rw write --nrfiles 4 --numjobs 4 --bs 1m --size 4m --json "$T/mt.json"
check "4 objects of 1 MiB" test "$(obj_list mt/)" = "4 4194304"
json_check "$T/mt.json" "4 PUTs" 'j["wire"]["requests"] == 4 and j["write"]["io_bytes"] == 4194304'
expect_rc 1 "two threads on one object are refused with the fix" run --engine s3 --filename \
	s3://llmio/mt1 --rw write --numjobs 2 --bs 5m --size 10m
expect_err "...naming it" "each object is written by one thread"

# --- errors ------------------------------------------------------------------------------------
expect_rc 1 "a missing bucket is one line" run --workload ckpt --model gpt2 --directory \
	s3://nobucket/x --engine s3 --scale 0.01
expect_err "...naming the bucket and the fix" "bucket nobucket does not exist" "create it"
check "...with no stray errno after it" test "$(grep -c '(No such file or directory)' "$T/stderr")" = 0
check "...one line only" test "$(wc -l <"$T/stderr")" = 1
expect_rc 2 "a recipe that updates its files in place is refused on objects" run --workload \
	infer --model gpt2 --directory s3://llmio/x --engine s3
expect_err "...saying which run there" "workload infer updates its files in place" \
	"load, pretrain, ckpt, finetune"
# the engine's cleanup=1 would delete ckpt's save before its restore reads it
expect_rc 2 "cleanup=1 in a recipe is refused" run --workload ckpt --model gpt2 --directory \
	s3://llmio/cl --engine s3 --cleanup=1 --scale 0.005 --dp 1
expect_err "...with the reason and the fix" "before a later phase reads them" "drop cleanup=1"
check "...before anything is written" test "$(obj_list cl/)" = "0 0"
expect_rc 1 "a missing staging directory is one line" run --workload ckpt --model gpt2 \
	--directory s3://llmio/x --engine psync --scale 0.01 --staging "$T/none"
expect_err "...naming --staging" "--staging $T/none is not a directory"
expect_rc 0 "--direct 1 on objects runs without O_DIRECT and says so" run --workload ckpt \
	--model gpt2 --directory s3://llmio/dio --engine s3 --scale 0.005 --dp 1 --direct 1 \
	--quiet --json "$T/dio.json"
json_check "$T/dio.json" "...in every phase's note" \
	"all('O_DIRECT does not apply to objects' in p['note'] for p in $P) and not d['runs'][0]['direct']"

s3_stop
finish
