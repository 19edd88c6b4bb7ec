#!/bin/bash
# cli_model.sh: `llmio model list` and `llmio model show`: the JSON against numbers worked out
# independently (model cards, MLPerf Storage, PEFT, the KV formula by hand), config.json input
# (a file and a directory), and the exit codes of bad input.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

DATA=$(cd "$(dirname "$0")/data" && pwd)
J=$T/show.json

# show_json DESC ARGS...: llmio model show ARGS --json exits 0 and prints one JSON object to $J
show_json() {
	local desc=$1; shift
	llmio model show "$@" --json
	cp "$T/stdout" "$J"
	if [ "$RC" -ne 0 ]; then fail "$desc: exit $RC: $(head -c 300 "$T/stderr")"; return 1; fi
	json_check "$J" "$desc: one JSON object" 'isinstance(d, dict)'
}

expect_rc 0 "list" model list
expect_out "list has every family" Llama-3.2-1B Llama-3.1-405B Mixtral-8x7B Qwen3-8B \
	Gemma-2-9B GPT-2 OPT-1.3B "2/8"
llmio model list --json
cp "$T/stdout" "$J"
json_check "$J" "list --json: 12 models" 'len(d) == 12 and d[2]["params_total"] == 8030261248'

show_json "Llama-3.1-8B" meta-llama/Llama-3.1-8B
json_check "$J" "8B params" 'd["params_total"] == 8030261248 and d["params_active"] == d["params_total"]'
json_check "$J" "8B weights bf16" 'd["weight_bytes"] == 16060522496 and d["dtype"] == "bf16"'
json_check "$J" "8B checkpoint 14 B/param" 'd["checkpoint_bytes"] == 14 * 8030261248'
json_check "$J" "8B KV 128 KiB/token, 2 MiB/block" \
	'd["kv_bytes_per_token"] == 131072 and d["kv_bytes_per_block"] == 2 << 20'
json_check "$J" "8B layers, shards" 'd["layers"] == 32 and d["shards"] == 4 and d["tensors"] == 291'
json_check "$J" "8B LoRA r16 q,v (PEFT: 6,815,744)" 'd["lora_params"] == 6815744'
json_check "$J" "8B activations s=4096 b=1" \
	'd["activation_bytes_per_layer"] == 4096 * (34 * 4096 + 5 * 32 * 4096)'

show_json "8B fp8" llama-3.1-8b --dtype fp8
json_check "$J" "--dtype fp8 halves weights and KV" \
	'd["weight_bytes"] == 8030261248 and d["kv_bytes_per_token"] == 65536'

show_json "8B MLPerf 1x1x8 ZeRO 3" llama-3.1-8b --dp 8 --zero 3
json_check "$J" "8 ranks of 1/8 each (MLPerf: 13.1 GiB)" \
	'd["rank_sizes"][0]["ranks"] == 8 and abs(d["rank_sizes"][0]["bytes"] / 2**30 - 13.1) < 0.13'

show_json "Mixtral" Mixtral-8x7B --tp 2 --pp 2 --dp 2 --zero 1
json_check "$J" "Mixtral total/active within 1 %" \
	'abs(d["params_total"] / 46.7e9 - 1) < 0.01 and abs(d["params_active"] / 12.9e9 - 1) < 0.01'
json_check "$J" "rank counts add up to 8" 'sum(r["ranks"] for r in d["rank_sizes"]) == 8'

show_json "config.json file" "$DATA/qwen2.5-7b.json" --seq-len 1024 --global-batch 512
json_check "$J" "Qwen2.5-7B from config" \
	'd["params_total"] == 7615616512 and d["qkv_bias"] and d["tokens_per_step"] == 512 * 1024'
mkdir -p "$T/gemma" && cp "$DATA/gemma-2-9b.json" "$T/gemma/config.json"
show_json "config.json directory" "$T/gemma"
json_check "$J" "Gemma-2 from a directory (fp32, tied)" \
	'd["dtype"] == "fp32" and d["tied_embeddings"] and d["params_total"] == 9241705984'

expect_rc 0 "text output" model show opt-1.3b --tp 2
expect_out "text names the sections" "parameters" "checkpoint" "per rank" "KV cache" \
	"activations" "LoRA" "Megatron-LM / DeepSpeed"
expect_rc 0 "--tensors" model show gpt2 --tensors
expect_out "tensor table" "model.safetensors" "transformer.wte.weight"

# bad input: exit 2, one line naming the problem
expect_rc 2 "no subcommand" model
expect_rc 2 "unknown subcommand" model frobnicate
expect_rc 2 "show without a model" model show
expect_rc 2 "unknown model" model show llama-9000
expect_err "unknown model says where to look" "llmio model list"
expect_rc 2 "bad dtype" model show gpt2 --dtype fp64
expect_rc 2 "zero stage out of range" model show gpt2 --zero 4
expect_rc 2 "tp zero" model show gpt2 --tp 0
expect_rc 2 "bad lora targets" model show gpt2 --lora-targets q,x
expect_rc 2 "unknown option" model show gpt2 --frobnicate
expect_rc 2 "missing option value" model show gpt2 --tp
expect_rc 2 "two models" model show gpt2 opt-1.3b
expect_rc 2 "missing key" model show "$DATA/bad-missing-key.json"
expect_err "missing key named" num_hidden_layers bad-missing-key.json
expect_rc 2 "wrong type" model show "$DATA/bad-wrong-type.json"
expect_err "wrong type names key and value" hidden_size '"4096"'
expect_rc 2 "unknown architecture" model show "$DATA/bad-unknown-arch.json"
expect_err "architecture named" MambaForCausalLM
expect_rc 2 "not JSON" model show "$DATA/bad-not-json.json"
expect_rc 2 "missing file" model show "$T/none/config.json"
expect_rc 0 "model --help" model --help
expect_rc 0 "show --help" model show --help
expect_out "show --help lists the options" --tp --zero --lora-targets --json
finish
