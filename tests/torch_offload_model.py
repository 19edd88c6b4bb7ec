# SPDX-License-Identifier: MIT
"""A small GPT-2-like decoder trained on random tokens with one offload mode, in this process.

    /usr/bin/python3 tests/torch_offload_model.py --mode all --dir DIR --steps 10 --json OUT

Modes: off (no hooks), keep (hooks that keep every tensor), all / window (llmio_offload through
the tensor store), torchsave (hooks that torch.save each saved tensor to its own file and load it
back: PyTorch's tutorial approach, the baseline bench/offload.sh compares with).  Writes one
JSON object: per-step losses (float.hex) and a SHA-256 of every gradient, step times, VmHWM,
the offloaded bytes and the store's statistics.  Used by tests/cli_torch_offload.sh and
bench/offload.sh; no weights or data are downloaded, seeds are fixed.
"""

import argparse
import hashlib
import json
import math
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, heads, t):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("mask", torch.ones(t, t).tril() == 0)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.reshape(b, t, h, d // h).transpose(1, 2)
        k = k.reshape(b, t, h, d // h).transpose(1, 2)
        v = v.reshape(b, t, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h))
        att = att.masked_fill(self.mask[:t, :t], float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, d, layers, heads, t):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(t, d)
        self.blocks = nn.ModuleList(Block(d, heads, t) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def vmhwm():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def page_cache(directory):
    """Bytes of the files under directory in the page cache (fincore), or -1 when unknown."""
    import subprocess

    paths = [os.path.join(r, f) for r, _, fs in os.walk(directory) for f in fs]
    if not paths:
        return 0
    try:
        p = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES"] + paths,
                           capture_output=True, text=True, check=True)
        return sum(int(x) for x in p.stdout.split())
    except (OSError, subprocess.CalledProcessError, ValueError):
        return -1


class TorchSave:
    """PyTorch tutorial's 'saving tensors to disk' hooks: one file per tensor, synchronous."""

    def __init__(self, directory, min_bytes):
        self.dir, self.min_bytes, self.n = directory, min_bytes, 0
        self.offloaded_bytes = 0

    def pack(self, t):
        if isinstance(t, nn.Parameter) or t.numel() * t.element_size() < self.min_bytes:
            return t
        self.n += 1
        path = os.path.join(self.dir, "tensor-%d.pt" % self.n)
        torch.save(t, path)
        self.offloaded_bytes += t.numel() * t.element_size()
        return path

    def unpack(self, p):
        if isinstance(p, torch.Tensor):
            return p
        t = torch.load(p)
        os.remove(p)
        return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="off", choices=["off", "keep", "all", "window", "torchsave"])
    ap.add_argument("--dir", default="")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--min-bytes", type=int, default=64 << 10)
    ap.add_argument("--engine", default="")
    ap.add_argument("--direct", type=int, default=1)
    ap.add_argument("--staging", type=int, default=4 << 20)
    # the hooks' read-ahead window (0: the store's read-ahead budget, half its staging)
    ap.add_argument("--readahead", type=int, default=0)
    ap.add_argument("--inflight", type=int, default=4 << 20)
    ap.add_argument("--capacity", type=int, default=256 << 20)
    ap.add_argument("--trace", default="")
    # offload the tensors saved after the model's forward (the loss's) too
    ap.add_argument("--offload-loss", type=int, default=0)
    # free blocks the hooks keep for unpack's tensors (-1: the default, the read-ahead window)
    ap.add_argument("--pool", type=int, default=-1)
    # hooks without the model object (the end of forward learned from the first step) and
    # without layers
    ap.add_argument("--no-model", type=int, default=0)
    # the hooks' malloc_trim interval in bytes (-1: their default; 0: never)
    ap.add_argument("--trim", type=int, default=-1)
    # torch's CPU tensors from the hooks' allocator (libllmio_torch) while they are active
    ap.add_argument("--cpu-alloc", type=int, default=1)
    ap.add_argument("--json", default="")
    a = ap.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(1234)
    model = GPT(a.vocab, a.d, a.layers, a.heads, a.seq)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(99)
    data = [torch.randint(0, a.vocab, (a.batch, a.seq + 1), generator=gen) for _ in range(a.steps)]

    store = hooks = None
    if a.mode in ("all", "window", "keep"):
        import llmio_offload

        if a.mode != "keep":
            store = llmio_offload.Store([a.dir], engine=a.engine, direct=bool(a.direct),
                                        capacity=a.capacity, staging_bytes=a.staging)
        kw = {} if a.trim < 0 else {"trim_bytes": a.trim}
        hooks = llmio_offload.Offload(store, policy=a.mode, min_bytes=a.min_bytes,
                                      model=None if a.no_model else model,
                                      layers=None if a.no_model and a.mode != "window"
                                      else list(model.blocks), keep_last=1,
                                      max_inflight_bytes=a.inflight, trace=a.trace or None,
                                      readahead_bytes=a.readahead or None,
                                      keep_after_forward=not a.offload_loss,
                                      pool_bytes=None if a.pool < 0 else a.pool,
                                      cpu_alloc=bool(a.cpu_alloc), **kw)
    elif a.mode == "torchsave":
        hooks = TorchSave(a.dir, a.min_bytes)

    rss0 = vmhwm()
    losses, grads, times, cpu, thread_cpu, faults, waits = [], [], [], [], [], [], []
    bwd_trims = []  # malloc_trim calls in each backward and end_step (the hooks trim only in forward)
    for step in range(a.steps):
        x, y = data[step][:, :-1], data[step][:, 1:]
        # CPU seconds (the process's: every thread; this thread's: the compute) and minor page
        # faults per step: figures that a busy machine inflates less than wall time
        c0, tc0 = time.process_time(), time.thread_time()
        w0 = getattr(hooks, "wait_s", 0) + getattr(hooks, "pack_wait_s", 0)
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        if isinstance(hooks, TorchSave):
            ctx = torch.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack)
        else:
            ctx = hooks
        if ctx is not None:
            with ctx:
                loss = F.cross_entropy(model(x).reshape(-1, a.vocab), y.reshape(-1))
        else:
            loss = F.cross_entropy(model(x).reshape(-1, a.vocab), y.reshape(-1))
        trims0 = getattr(hooks, "trims", 0)
        loss.backward()
        if hooks is not None and hasattr(hooks, "end_step"):
            hooks.end_step()
        bwd_trims.append(getattr(hooks, "trims", 0) - trims0)
        opt.step()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        thread_cpu.append(time.thread_time() - tc0)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        # the compute thread's waits for the store in this step (unpack's and pack's)
        waits.append(getattr(hooks, "wait_s", 0) + getattr(hooks, "pack_wait_s", 0) - w0)
        losses.append(loss.item().hex())
        h = hashlib.sha256()
        for p in model.parameters():
            h.update(p.grad.numpy().tobytes())
        grads.append(h.hexdigest())
        del loss
    out = {
        "mode": a.mode,
        "losses": losses,
        "grads": grads,
        "step_s": times,
        "cpu_s": cpu,
        "thread_cpu_s": thread_cpu,
        "minflt": faults,
        "wait_step_s": waits,
        "bwd_trims": bwd_trims,
        "vmhwm_start": rss0,
        "vmhwm": vmhwm(),
        "offloaded_bytes": getattr(hooks, "offloaded_bytes", 0),
    }
    if hooks is not None and hasattr(hooks, "close"):
        hooks.close()
        out.update(offloaded=hooks.offloaded, kept=hooks.kept, kept_bytes=hooks.kept_bytes,
                   dedup=hooks.dedup, pack_s=hooks.pack_s, unpack_s=hooks.unpack_s,
                   wait_s=hooks.wait_s, peak_ahead_bytes=hooks.peak_ahead_bytes)
        if hasattr(hooks, "edge_bytes"):
            out.update(pack_wait_s=hooks.pack_wait_s, edge_bytes=hooks.edge_bytes,
                       unit_bytes=hooks.unit_bytes, trims=hooks.trims, trim_s=hooks.trim_s,
                       trim_cpu_s=hooks.trim_cpu_s, trim_off=hooks.trim_off,
                       learned_saves=hooks.learned_saves, trim_bytes=hooks.trim_bytes,
                       learned_keep=sorted(hooks.learned_keep),
                       pool_hits=hooks.pool_hits, pool_misses=hooks.pool_misses,
                       cpu_alloc_off=hooks.cpu_alloc_off, cpu_alloc_served=hooks.cpu_alloc_served)
    if store is not None:
        out["store"] = store.stats()
        out["store_page_cache"] = page_cache(a.dir)
        store.close()
    text = json.dumps(out, indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
