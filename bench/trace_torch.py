# SPDX-License-Identifier: MIT
"""A small but real PyTorch training program for bench/trace_accuracy.sh.

    python3 trace_torch.py WORKDIR setup   # writes the dataset and the initial model (once)
    python3 trace_torch.py WORKDIR run     # load, train with DataLoader workers, checkpoint

The run: torch.load of the initial model (load), 2 epochs over 96 sample files of 96 KiB read
by 2 DataLoader worker processes (train), torch.save of a checkpoint after each epoch, written
to a temporary name, fsynced and renamed (checkpoint).  Phases are marked with
python/llmio_phase.py, which does nothing when the program is not traced.
"""
import os
import sys

import torch
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import llmio_phase  # noqa: E402

SAMPLES = 96
SAMPLE_BYTES = 96 * 1024
DIM = SAMPLE_BYTES // 4


class Samples(Dataset):
    def __init__(self, root):
        self.files = [os.path.join(root, "data", "sample%03d.bin" % i) for i in range(SAMPLES)]

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        with open(self.files[i], "rb") as f:
            raw = f.read()
        x = torch.frombuffer(bytearray(raw), dtype=torch.float32)
        return x, x[:1].clone()


def setup(root):
    g = torch.Generator().manual_seed(1)
    os.makedirs(os.path.join(root, "data"), exist_ok=True)
    os.makedirs(os.path.join(root, "ckpt"), exist_ok=True)
    for i in range(SAMPLES):
        t = torch.rand(DIM, generator=g)
        with open(os.path.join(root, "data", "sample%03d.bin" % i), "wb") as f:
            f.write(t.numpy().tobytes())
    model = torch.nn.Sequential(torch.nn.Linear(DIM, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    torch.save(model.state_dict(), os.path.join(root, "model.pt"))


def run(root):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(DIM, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    with llmio_phase.phase("load"):
        model.load_state_dict(torch.load(os.path.join(root, "model.pt")))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    loader = DataLoader(Samples(root), batch_size=8, shuffle=True, num_workers=2)
    for epoch in range(2):
        with llmio_phase.phase("train"):
            for x, y in loader:
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
        with llmio_phase.phase("checkpoint"):
            final = os.path.join(root, "ckpt", "epoch%d.pt" % epoch)
            tmp = final + ".tmp"
            with open(tmp, "wb") as f:
                torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, f)
                f.flush()
                os.fsync(f.fileno())
            os.rename(tmp, final)
    print("loss %.4f" % loss.item())


if __name__ == "__main__":
    {"setup": setup, "run": run}[sys.argv[2]](sys.argv[1])
