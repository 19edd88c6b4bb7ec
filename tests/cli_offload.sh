#!/usr/bin/env bash
# llmio run --workload offload: activations put in forward and got back in reverse in backward
# through the tensor store, from a trace (python/llmio_offload.py's format) or the model
# catalog, at a tiny scale with exact byte totals; the endurance figures; the errors.
. "$(dirname "$0")/lib.sh"

# A trace: step 0 differs, the recipe uses the last step (3 layers, 384 KiB).
cat >"$T/trace.txt" <<'EOF'
# llmio-offload-trace 1
# layer bytes fwd_us bwd_us
# step 0
0 4096 10 20
# step 1
0 65536 1000 2000
1 131072 1000 2000
2 196608 500 1000
EOF
want=$((65536 + 131072 + 196608))
m="d['runs'][0]['phases']"

expect_rc 0 "offload from a trace, 2 steps" run --workload offload --trace "$T/trace.txt" \
	--steps 2 --directory "$T" --engine psync --json "$T/t.json" --quiet
json_check "$T/t.json" "one phase per step" "[p['name'] for p in $m] == ['step 1', 'step 2']"
json_check "$T/t.json" "each step writes and reads the trace's last step: $want bytes" \
	"all(p['metrics']['bytes_written'] == $want and p['metrics']['bytes_read'] == $want for p in $m)"
json_check "$T/t.json" "every byte written reached the device (O_DIRECT)" \
	"all(p['metrics']['device_bytes_written'] == $want for p in $m)"
json_check "$T/t.json" "each step's note says O_DIRECT" \
	"all(p['note'] == 'tensor store, O_DIRECT' for p in $m)"
json_check "$T/t.json" "device reads never exceed what was got" \
	"all(p['metrics']['device_bytes_read'] <= $want for p in $m)"
json_check "$T/t.json" "peak memory without offload = the step's activations; promised = 2x" \
	"all(p['metrics']['peak_mem_keep'] == $want and p['promised_bytes'] == 2 * $want for p in $m)"
json_check "$T/t.json" "compute = the trace's forward + backward times" \
	"all(abs(p['metrics']['compute_s'] - 0.0075) < 1e-9 for p in $m)"
json_check "$T/t.json" "step >= compute, stall = step - compute, overlap in [0, 1]" \
	"all(p['metrics']['step_s'] >= p['metrics']['compute_s'] and abs(p['metrics']['exposed_stall_s'] - (p['metrics']['step_s'] - p['metrics']['compute_s'])) < 1e-6 and 0 <= p['metrics']['overlap'] <= 1 for p in $m)"
json_check "$T/t.json" "no years to endurance without --tbw" \
	"all('years_to_tbw' not in p['metrics'] for p in $m)"
no_store() { [ -z "$(find "$T" -name '*store*' -newer "$T/trace.txt")" ]; }
check "the store's files are gone after the run" no_store

# --fwd_ms overrides the trace's times; --layers takes the first layers; --tbw, --drive_tb
expect_rc 0 "offload --layers 2 --fwd_ms 2 --tbw 600 --drive_tb 2" run --workload offload \
	--trace "$T/trace.txt" --steps 1 --layers 2 --fwd_ms 2 --bwd_factor 3 --tbw 600 \
	--drive_tb 2 --directory "$T" --engine psync --json "$T/l.json" --quiet
json_check "$T/l.json" "2 layers: 192 KiB, compute 2 x (2 + 6) ms" \
	"$m[0]['metrics']['bytes_written'] == 196608 and abs($m[0]['metrics']['compute_s'] - 0.016) < 1e-9"
json_check "$T/l.json" "DWPD = bytes per day / 2 TB; years = 600 TB / bytes per day / 365" \
	"(lambda x: abs(x['drive_writes_per_day'] - 196608 * 86400 / x['step_s'] / 2e12) < 1e-9 * x['drive_writes_per_day'] + 1e-12 and abs(x['years_to_tbw'] * 365 * x['drive_writes_per_day'] * 2e12 - 600e12) < 1e-6 * 600e12)($m[0]['metrics'])"

# from the catalog: GPT-2, micro-batch 1 x 128 tokens: s*b*(34h + 5as) per layer, scaled 1 %
# and rounded up to 4 KiB
per=$(python3 -c 'import math; b = int(128 * (34 * 768 + 5 * 12 * 128) * 0.01); print(-(-b // 4096) * 4096)')
expect_rc 0 "offload --model GPT-2 --seq 128 --scale 0.01 --layers 3" run --workload offload \
	--model GPT-2 --micro_batch 1 --seq 128 --scale 0.01 --layers 3 --fwd_ms 1 --steps 1 \
	--directory "$T" --engine psync --json "$T/m.json" --quiet
json_check "$T/m.json" "catalog: 3 layers x $per bytes written, read, on the device" \
	"$m[0]['metrics']['bytes_written'] == 3 * $per == $m[0]['metrics']['bytes_read'] == $m[0]['metrics']['device_bytes_written']"

# a layer larger than --tensor goes in pieces; the totals stay exact
expect_rc 0 "offload --tensor 64k (layers in pieces)" run --workload offload \
	--trace "$T/trace.txt" --steps 1 --tensor 64k --fwd_ms 0.1 --directory "$T" \
	--engine psync --json "$T/p.json" --quiet
json_check "$T/p.json" "pieces: still $want bytes each way" \
	"$m[0]['metrics']['bytes_written'] == $want == $m[0]['metrics']['bytes_read']"

# through the page cache at queue depth 1: a tensor that ends inside an alignment unit needs a
# direct part and a staged tail; with one I/O slot it is staged whole (this hung once)
expect_rc 0 "offload --direct 0 at iodepth 1 ends" run --workload offload --model gpt2 \
	--steps 1 --layers 2 --fwd_ms 2 --scale 0.01 --directory "$T" --engine psync --direct 0 \
	--iodepth 1 --json "$T/b.json" --quiet
json_check "$T/b.json" "...and reads back every byte it wrote" \
	"$m[0]['metrics']['bytes_written'] == $m[0]['metrics']['bytes_read'] > 0"

# every engine that runs here, side by side
expect_rc 0 "offload --engine all" run --workload offload --trace "$T/trace.txt" --steps 1 \
	--fwd_ms 0.1 --directory "$T" --engine all --json "$T/a.json"
json_check "$T/a.json" "--engine all: every engine moved $want bytes each way" \
	"len(d['runs']) >= 2 and all(r['phases'][0]['metrics']['bytes_written'] == $want == r['phases'][0]['metrics']['bytes_read'] for r in d['runs'])"
expect_out "--engine all prints the engines side by side" "phase time and rate by engine"

# errors: one line naming the fix
expect_rc 2 "neither --model nor --trace" run --workload offload --directory "$T"
expect_err "says what it needs" "--model" "--trace"
printf '0 4096 ten 20\n' >"$T/bad.txt"
expect_rc 2 "a malformed trace line" run --workload offload --trace "$T/bad.txt" --directory "$T"
expect_err "names the file, the line and the format" "bad.txt line 1" "layer bytes fwd_us bwd_us"
# every field is range-checked, naming the field and the line: a byte count of 2^64-1 or -1
# was undefined behaviour, and a huge one made the piece count wrap (a heap overflow in
# llmio_store_put under ASan, an abort in free() in the release build)
bad_trace() { # bad_trace DESC TEXT WANT... : the trace TEXT is refused (exit 2) saying WANT
	local desc=$1 text=$2; shift 2
	printf '# step 0\n%b' "$text" >"$T/bad.txt"
	expect_rc 2 "trace: $desc" run --workload offload --trace "$T/bad.txt" --tensor 4k \
		--directory "$T" --engine psync --direct 0 --quiet &&
		expect_err "trace: $desc: says where and what" "$@"
}
bad_trace "bytes 2^64-1" '0 4096 1 1\n1 18446744073709551615 1 1\n' "bad.txt line 3" \
	"bytes 18446744073709551615 is out of range" "0..1099511627776"
bad_trace "bytes 2^64" '0 18446744073709551616 1 1\n' "line 2" "bytes" "out of range"
bad_trace "bytes -1" '0 -1 1 1\n' "line 2" "bad or missing bytes"
bad_trace "fwd_us past an hour" '0 4096 3600000001 1\n' "line 2" "fwd_us" "out of range"
bad_trace "bwd_us missing" '0 4096 1\n' "line 2" "bad or missing bwd_us"
bad_trace "a fifth field" '0 4096 1 1 1\n' "line 2" "nothing after"
bad_trace "layer index past the limit" '4096 4096 1 1\n' "line 2" "layer 4096 is out of range"
bad_trace "two layers of a TiB in 4 KiB puts" '0 1099511627776 0 0\n1 1099511627776 0 0\n' \
	"more than 1048576 puts" "--tensor"
bad_trace "a line longer than the reader takes" "0 4096 1 1 $(printf '%0600d' 0)\n" \
	"line 2" "longer than"
expect_rc 2 "a model's layer past a TiB of activations" run --workload offload \
	--model Llama-3.1-405B --micro_batch 65536 --seq 16777216 --directory "$T" --engine psync \
	--direct 0 --quiet
expect_err "names the parameters to lower" "layer 0 would hold" "--micro_batch, --seq or --scale"
expect_rc 1 "a missing trace" run --workload offload --trace "$T/none.txt" --directory "$T"
expect_err "names the missing trace" "none.txt"
expect_rc 2 "--drive_tb 0" run --workload offload --trace "$T/trace.txt" --drive_tb 0 \
	--directory "$T"
expect_err "names the parameter" "--drive_tb"
expect_rc 0 "--help lists the recipe's parameters" run --workload offload --help
expect_out "--help: trace, fwd_ms, tbw" "trace" "fwd_ms" "tbw" "drive_tb"
finish
