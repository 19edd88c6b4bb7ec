# SPDX-License-Identifier: MIT
"""Model save and load in safetensors-like shards: a JSON header, then the tensors' raw bytes.

    python3 shards.py DIR setup    # nothing to prepare
    python3 shards.py DIR run      # save a 1 GiB model in 2 shards, fsync, then load it back

The format is safetensors' own (an 8-byte little-endian header length, a JSON header naming
each tensor's dtype, shape and byte range, then the data), written and read with the standard
library and torch only: no download, no safetensors package.  Phases: "save", then "load"
(each shard read header first, then every tensor at its offset, as a loader does).

What it models: saving and loading a model's weights, where each shard is a large file and
each tensor a large write or read (32 MiB here, a 4096 x 2048 float32 matrix, a layer of a
7B model).  Hugging Face's save_pretrained cuts shards of up to 5 GB; these are 512 MiB, the
most this 2-core machine, shared with other work, can write and fsync 20 times over in a
benchmark run (LLMIO_SUITE_SHARD_MIB sets another size, in MiB, a multiple of 32).  A load
keeps every tensor (and checks it) as a model load does, so memory holds the model twice.
"""
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import llmio_phase  # noqa: E402

SHARDS = 2
SHARD_MIB = int(os.environ.get("LLMIO_SUITE_SHARD_MIB", "512"))
SHAPE = (4096, 2048)  # 32 MiB of float32
LAYERS = SHARDS * SHARD_MIB // 32


def model():
    # distinct, deterministic contents, made at memory speed (randn of 1 GiB takes seconds)
    n = SHAPE[0] * SHAPE[1]
    return {"layer%03d.weight" % i: torch.arange(n, dtype=torch.float32).add_(i).reshape(SHAPE)
            for i in range(LAYERS)}


def save(root, tensors):
    names = sorted(tensors)
    per = (len(names) + SHARDS - 1) // SHARDS
    for s in range(SHARDS):
        part = names[s * per:(s + 1) * per]
        header, off = {}, 0
        for n in part:
            size = tensors[n].numel() * 4
            header[n] = {"dtype": "F32", "shape": list(tensors[n].shape), "data_offsets": [off, off + size]}
            off += size
        h = json.dumps(header).encode()
        path = os.path.join(root, "model-%05d-of-%05d.safetensors" % (s + 1, SHARDS))
        with open(path + ".tmp", "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h)
            for n in part:
                f.write(tensors[n].numpy().tobytes())
            f.flush()
            os.fsync(f.fileno())
        os.rename(path + ".tmp", path)


def load(root):
    out = {}
    for s in range(SHARDS):
        path = os.path.join(root, "model-%05d-of-%05d.safetensors" % (s + 1, SHARDS))
        fd = os.open(path, os.O_RDONLY)
        (n,) = struct.unpack("<Q", os.pread(fd, 8, 0))
        header = json.loads(os.pread(fd, n, 8))
        for name, meta in header.items():
            a, b = meta["data_offsets"]
            raw = os.pread(fd, b - a, 8 + n + a)
            out[name] = torch.frombuffer(bytearray(raw), dtype=torch.float32).reshape(meta["shape"])
        os.close(fd)
    return out


def run(root):
    m = model()
    with llmio_phase.phase("save"):
        save(root, m)
    with llmio_phase.phase("load"):
        back = load(root)
    assert all(torch.equal(m[k], back[k]) for k in m)
    print("tensors", len(back))


if __name__ == "__main__":
    if sys.argv[2] == "run":
        run(sys.argv[1])
