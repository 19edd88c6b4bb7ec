# SPDX-License-Identifier: MIT
"""A data loader over many small files, with worker processes (PyTorch's DataLoader).

    python3 loader.py DIR setup    # writes 2,000 sample files of 4-64 KiB (once)
    python3 loader.py DIR run      # 20 epochs, 2 worker processes, batches of 32

What it models: the input pipeline of a training job over a dataset of small samples (images,
audio clips, token shards), which reads every sample once per epoch for many epochs.  Workers
are started again each epoch (DataLoader's default, persistent_workers=False), so the
tracer's start in each new process counts as often as it does in such a job; the run lasts
long enough (about 40,000 samples read) that `import torch`, a fixed cost of every run, is not
most of it.  The per-sample work is what the loader does to a sample (bytes to a float
tensor) and the step's compute a small matmul: no extra work is added to make the tracer's
per-call cost look smaller.

Phases (python/llmio_phase.py; nothing when untraced): "data" while the loader runs.
LLMIO_SUITE_EPOCHS overrides the number of epochs (a quick look; the suite uses 20).
"""
import os
import random
import sys

import torch
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import llmio_phase  # noqa: E402

FILES = 2000
EPOCHS = int(os.environ.get("LLMIO_SUITE_EPOCHS", "20"))


class Samples(Dataset):
    def __init__(self, root):
        self.files = [os.path.join(root, "samples", "s%05d.bin" % i) for i in range(FILES)]

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        with open(self.files[i], "rb") as f:
            raw = f.read()
        x = torch.frombuffer(bytearray(raw[:4096]), dtype=torch.uint8).float()
        return x, float(len(raw))


def setup(root):
    rng = random.Random(7)
    os.makedirs(os.path.join(root, "samples"), exist_ok=True)
    for i in range(FILES):
        with open(os.path.join(root, "samples", "s%05d.bin" % i), "wb") as f:
            f.write(os.urandom(rng.randrange(4096, 65536, 4096)))


def run(root):
    torch.manual_seed(0)
    w = torch.randn(4096, 64)
    loader = DataLoader(Samples(root), batch_size=32, shuffle=True, num_workers=2)
    total = 0.0
    with llmio_phase.phase("data"):
        for _ in range(EPOCHS):
            for x, n in loader:
                x @ w  # the step's compute, beside the workers' reads
                total += float(n.sum())
    print("bytes", int(total))


if __name__ == "__main__":
    {"setup": setup, "run": run}[sys.argv[2]](sys.argv[1])
