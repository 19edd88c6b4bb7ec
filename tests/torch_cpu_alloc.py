"""The offload hooks' CPU allocator for torch (libllmio_torch, src/torch/cpu_alloc.cpp), checked
from torch itself; run by tests/cli_torch_offload.sh with /usr/bin/python3.

    torch_cpu_alloc.py PYTHON_DIR installed ASAN   the allocator, while the hooks are active
    torch_cpu_alloc.py PYTHON_DIR missing          no library: the hooks say why, and run

The witness of why it exists is glibc's own behaviour: a freed tensor's block, with a live one
after it, reused by the next tensor of its size: 7 of 7 times through libllmio_torch's malloc.
Through torch's own posix_memalign glibc 2.36 reuses it only when the spare bytes it cut off
before found no room in its per-thread cache (bench/aligned_reuse.c: 1 of 7 in a program of its
own); that count is printed, not asserted (a glibc with bug 30723 fixed reuses it always).  ASan's allocator is not glibc's, and it
aborts on a request it cannot serve, so those two checks are the normal builds'."""

import gc
import sys

import torch

sys.path.insert(0, sys.argv[1])
import llmio_offload as lo  # noqa: E402

M = 12 << 20


def reuse(n=7):
    """How many of n times a freed 12 MiB tensor's block went to the next one of its size."""
    big = torch.empty(16 << 20, dtype=torch.uint8)  # freed: its mmap threshold rises above 12 MiB
    del big
    hits = 0
    for _ in range(n):
        a = torch.empty(M, dtype=torch.uint8)
        b = torch.empty(M, dtype=torch.uint8)  # live after a
        at = a.data_ptr()
        del a
        c = torch.empty(M, dtype=torch.uint8)
        hits += c.data_ptr() == at
        del b, c
    return hits


def installed(asan):
    o = lo.Offload(None, policy="keep")
    assert o.cpu_alloc_off is None, o.cpu_alloc_off
    served = lo._cpu_alloc[0].llmio_torch_alloc_served
    n0 = served()
    with o:
        x = torch.empty(1000, dtype=torch.float32)
        assert served() > n0 and x.data_ptr() % 64 == 0, (served(), n0, x.data_ptr())
        with lo.Offload(None, policy="keep"):  # nested: the outer one still holds it after
            pass
        n1 = served()
        y = torch.ones(1000)
        assert served() == n1 + 1, "not installed after a nested Offload ended"
        hits_in = reuse()
        if not asan:  # malloc fails: the allocator it replaced raises torch's own error
            try:
                torch.empty(1 << 62, dtype=torch.uint8)
                raise AssertionError("a 4 EiB tensor was allocated")
            except RuntimeError as ex:
                assert "DefaultCPUAllocator: can't allocate memory" in str(ex), ex
    n2 = served()
    z = torch.empty(1000)
    assert served() == n2, "torch still calls it after the hooks ended"
    assert float(y.sum()) == 1000.0
    del x, y, z  # made by it, freed after it was replaced: each keeps its own deleter
    gc.collect()
    hits_out = reuse()
    off = lo.Offload(None, policy="keep", cpu_alloc=False)
    with off:
        n3 = served()
        torch.empty(1000)
        assert served() == n3 and off.cpu_alloc_off == "cpu_alloc=False"
    print("reuse in 7: %d with the hooks' allocator, %d with torch's own" % (hits_in, hits_out))
    if not asan:
        assert hits_in == 7, hits_in


def missing():
    o = lo.Offload(None, policy="keep")
    why = o.cpu_alloc_off or ""
    assert "/nonexistent/libllmio_torch.so" in why and "LLMIO_TORCH_LIB" in why, why
    w = torch.ones(8, requires_grad=True)
    with o:
        loss = (w * 2).relu().sum()
    loss.backward()
    assert float(w.grad.sum()) == 16.0
    print(why)


if sys.argv[2] == "installed":
    installed(sys.argv[3] == "1")
else:
    missing()
