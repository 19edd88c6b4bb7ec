#!/bin/bash
# python/llmio_lifetimes.py: the tensor lifetimes of one real PyTorch training step (the small
# GPT of tests/torch_offload_model.py), recorded with module and saved-tensor hooks, written as
# an llmio-lifetimes 1 file that `llmio run --workload migrate` plans: the file holds exactly the
# tensors and bytes the hooks saw, uses come after creation, recording leaves the step's result
# unchanged, and a budget below the recorded peak makes the planner move something.
# Skips (77) where /usr/bin/python3 has no torch (scripts/bootstrap.sh installs python3-torch).
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$PY" ] || skip_all "no $PY (Debian's python3-torch is built for it)"
"$PY" -c 'import torch' 2>/dev/null ||
	skip_all "torch absent: $PY cannot import torch (scripts/bootstrap.sh installs python3-torch and libopenblas0-pthread)"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

# one step recorded, one step of the same model and batch without hooks; the counters the hooks
# kept go to a JSON file beside the lifetimes
rec_py='
import hashlib, json, sys
sys.path[:0] = [sys.argv[1] + "/python", sys.argv[1] + "/tests"]
import torch, torch.nn.functional as F
import torch_offload_model as m
import llmio_lifetimes

torch.set_num_threads(1)

def step(rec):
    torch.manual_seed(1234)
    net = m.GPT(512, 128, 4, 4, 128)
    x = torch.randint(0, 512, (4, 129), generator=torch.Generator().manual_seed(99))
    r = llmio_lifetimes.Recorder(net) if rec else None
    if r:
        r.__enter__()
    loss = F.cross_entropy(net(x[:, :-1]).reshape(-1, 512), x[:, 1:].reshape(-1))
    loss.backward()
    if r:
        r.__exit__(None, None, None)
    h = hashlib.sha256()
    for p in net.parameters():
        h.update(p.grad.numpy().tobytes())
    return r, loss.item().hex(), h.hexdigest(), sum(1 for _ in net.modules())

r, loss, grads, nmod = step(True)
r.write(sys.argv[2])
_, loss0, grads0, _ = step(False)
json.dump({"saved": r.saved, "saved_bytes": r.saved_bytes, "grads": r.grads,
           "grad_bytes": r.grad_bytes, "modules": nmod, "same": [loss, grads] == [loss0, grads0]},
          open(sys.argv[3], "w"))'
run timeout -k 5 240 "$PY" -c "$rec_py" "$SRC" "$T/step.lt" "$T/hooks.json"
if [ "$RC" -ne 0 ]; then
	fail "record a step: exit $RC: $(tail -c 600 "$T/stderr")"
	finish
fi
pass "record a step of the test model"
json_check "$T/hooks.json" "recording leaves the loss and every gradient bitwise unchanged" 'd["same"]'
json_check "$T/hooks.json" "the hooks saw saved tensors and gradients" \
	'd["saved"] > 0 and d["saved_bytes"] > 0 and d["grads"] > 0'

check "the file starts with llmio-lifetimes 1" \
	bash -c '[ "$(head -1 "$1")" = "llmio-lifetimes 1" ]' _ "$T/step.lt"
# the table, read back here independently of the recorder and of llmio's reader
file_py='
import json, sys
kernels, tensors = [], []
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "kernel":
        kernels.append((f[1], float(f[2])))
    elif f and f[0] == "tensor":
        tensors.append((f[1], int(f[2]), f[3], f[4], [] if f[5] == "-" else [int(u) for u in f[5].split(",")]))
h = json.load(open(sys.argv[2]))
kinds = {k: sum(t[1] for t in tensors if t[2] == k) for k in ("weight", "activation", "gradient")}
created = {t[0]: (None if t[3] == "-" else int(t[3])) for t in tensors}
print(json.dumps({
    "kernels": len(kernels), "fwd": sum(1 for k in kernels if k[0].startswith("fwd")),
    "bwd": sum(1 for k in kernels if k[0].startswith("bwd")),
    "compute_us": sum(k[1] for k in kernels), "durations_ok": all(k[1] >= 0 for k in kernels),
    "tensors": len(tensors), "bytes": sum(t[1] for t in tensors), "kinds": kinds,
    "want_tensors": h["saved"] + h["grads"], "want_bytes": h["saved_bytes"] + h["grad_bytes"],
    "want_grad_bytes": h["grad_bytes"], "modules": h["modules"],
    "names_distinct": len(set(t[0] for t in tensors)) == len(tensors),
    "uses_after_creation": all(created[t[0]] is None or all(u > created[t[0]] for u in t[4]) for t in tensors),
    "uses_ascending": all(t[4] == sorted(set(t[4])) for t in tensors),
    "weights_across_steps": all((t[3] == "-") == (t[2] == "weight") for t in tensors),
    "activations_used_in_backward": all(t[4] and kernels[t[4][-1]][0].startswith("bwd") for t in tensors if t[2] == "activation"),
}))'
"$PY" -c "$file_py" "$T/step.lt" "$T/hooks.json" >"$T/file.json" ||
	fail "read the file back: $(cat "$T/file.json")"
json_check "$T/file.json" "tensor count in the file == saved tensors + gradients the hooks saw" \
	'd["tensors"] == d["want_tensors"]'
json_check "$T/file.json" "total bytes in the file == what the hooks saw" \
	'd["bytes"] == d["want_bytes"] and d["kinds"]["gradient"] == d["want_grad_bytes"]'
json_check "$T/file.json" "weights, activations and gradients, each with bytes" \
	'all(v > 0 for v in d["kinds"].values())'
json_check "$T/file.json" "every tensor's uses come after its creation, ascending" \
	'd["uses_after_creation"] and d["uses_ascending"]'
json_check "$T/file.json" "weights (and only they) live across steps; activations die in backward" \
	'd["weights_across_steps"] and d["activations_used_in_backward"]'
json_check "$T/file.json" "a forward kernel per module call at least, backward kernels, measured time" \
	'd["fwd"] >= d["modules"] and d["bwd"] >= d["modules"] - 2 and d["compute_us"] > 0 and d["durations_ok"]'
json_check "$T/file.json" "tensor names are distinct" 'd["names_distinct"]'

# the planner reads it: with room for everything nothing moves, and the peak is the step's
llmio run --workload migrate --lifetimes "$T/step.lt" --budget 1t --simulate --policy all \
	--json "$T/free.json" --quiet
if [ "$RC" -ne 0 ]; then
	fail "migrate --lifetimes (recorded) --simulate: exit $RC: $(head -c 400 "$T/stderr")"
	finish
fi
pass "migrate --lifetimes accepts the recorded step"
json_check "$T/free.json" "the simulated step computes for the recorded time" \
	"abs(d['runs'][0]['phases'][0]['metrics']['compute_s'] * 1e6 - $(json_get "$T/file.json" 'd["compute_us"]')) < 1e-3 * $(json_get "$T/file.json" 'd["kernels"]')"
json_check "$T/free.json" "with room for everything, g10 and lru move nothing" \
	"all(p['metrics']['transfers'] == 0 for p in d['runs'][0]['phases'] if p['name'] in ('simulate-g10', 'simulate-lru'))"
peak=$(json_get "$T/free.json" "int([p['metrics']['peak_fast_bytes'] for p in d['runs'][0]['phases'] if p['name'] == 'simulate-g10'][0])")
json_check "$T/free.json" "the peak is above 0 and at most every byte recorded" \
	"0 < $peak <= $(json_get "$T/file.json" 'd["bytes"]')"

# below the peak the plans evict: g10 and lru move tensors out and back, within the budget
budget=$((peak * 7 / 10))
llmio run --workload migrate --lifetimes "$T/step.lt" --budget "$budget" --simulate \
	--policy all --json "$T/tight.json" --plan_file "$T/plan.txt" --quiet
if [ "$RC" -eq 0 ]; then
	for pol in g10 lru; do
		json_check "$T/tight.json" "$pol at 70 % of the peak ($budget bytes) evicts and fetches back, within the budget" \
			"[(m['host_out_bytes'] + m['ssd_out_bytes'] > 0 and m['host_out_bytes'] + m['ssd_out_bytes'] == m['host_in_bytes'] + m['ssd_in_bytes'] and m['peak_fast_bytes'] <= $budget and 'cannot run' not in p['note']) for p in d['runs'][0]['phases'] for m in [p['metrics']] if p['name'] == 'simulate-$pol'] == [True]"
	done
	check "the plan file lists g10's evictions" \
		bash -c 'awk "/^policy/ {p = \$2} p == \"g10\" && / out / {n++} END {exit !n}" "$1"' _ "$T/plan.txt"
else
	fail "migrate at $budget bytes: exit $RC: $(head -c 400 "$T/stderr")"
fi
finish
