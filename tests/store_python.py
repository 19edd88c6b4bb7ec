# SPDX-License-Identifier: MIT
"""Helpers of tests/cli_store_python.sh: python/llmio_offload.py's errors, cleanup and reclaim.

    store_python.py hold DIR        a store in DIR; prints its file, then sleeps until a signal
    store_python.py reclaim DIR     a new store in DIR; prints what it reclaimed
    store_python.py errors DIR      the exception classes of failed store calls
    store_python.py full DIR        a put fails for lack of space mid-step; later steps work

Each prints one line per check ("ok: ..." or "FAIL: ...") and exits 1 if any failed.
"""

import errno
import glob
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from llmio_offload import Offload, Store, StoreError  # noqa: E402

FAILS = 0


def check(desc, ok):
    global FAILS
    print(("ok:   " if ok else "FAIL: ") + desc, flush=True)
    FAILS += 0 if ok else 1


def store_files(d):
    return sorted(glob.glob(os.path.join(d, "llmio-work", "store.*")))


def hold(d):
    # as a program started from a terminal: Ctrl-C raises KeyboardInterrupt (a shell starts
    # background programs with SIGINT ignored)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    s = Store([d], capacity=4 << 20, stripe_size=64 << 10, staging_bytes=256 << 10)
    print("ready", store_files(d)[0], flush=True)
    time.sleep(120)
    s.close()


def reclaim(d):
    s = Store([d], capacity=4 << 20, stripe_size=64 << 10, staging_bytes=256 << 10)
    print("reclaimed", s.reclaimed_files, s.reclaimed_bytes, flush=True)
    s.close()


def outcome(fn):
    """The exception fn raises (or None)."""
    try:
        fn()
    except Exception as ex:  # noqa: BLE001 - the class is what is checked
        return ex
    return None


def errors(d):
    ex = outcome(lambda: Store([os.path.join(d, "no-such-dir", "f")]))
    check("a store on a missing directory raises StoreError (%r)" % ex,
          isinstance(ex, StoreError) and ex.errno == errno.ENOENT)
    s = Store([d], capacity=1 << 20, stripe_size=64 << 10, staging_bytes=256 << 10)
    buf = bytearray(2 << 20)
    ptr = ctypes_addr(buf)
    ex = outcome(lambda: s.put(ptr, len(buf)))
    check("a put larger than the store raises StoreError ENOSPC (%r)" % ex,
          isinstance(ex, StoreError) and ex.errno == errno.ENOSPC)
    ex = outcome(lambda: s.release(12345))
    check("a release of an unknown handle raises StoreError ENOENT (%r)" % ex,
          isinstance(ex, StoreError) and ex.errno == errno.ENOENT)
    s.close()

    import torch

    # a get failing in backward (the store's file emptied under it): StoreError, not torch's
    # RuntimeError, from Offload.backward
    s = Store([d], capacity=4 << 20, stripe_size=64 << 10, staging_bytes=256 << 10)
    hooks = Offload(s, policy="all", min_bytes=64 << 10)
    x = torch.randn(65536, requires_grad=True)
    with hooks:
        loss = torch.sin(torch.sin(x)).sum()
    s.flush()
    os.truncate(store_files(d)[0], 0)
    ex = outcome(lambda: hooks.backward(loss))
    check("a get failing in backward raises StoreError from Offload.backward (%r)"
          % (ex if not isinstance(ex, RuntimeError) else type(ex)),
          isinstance(ex, StoreError) and ex.errno == errno.EIO)
    del loss
    ex = outcome(hooks.close)
    check("close then reports the failed gets as StoreError (%r)" % ex, isinstance(ex, StoreError))
    s.close()


def ctypes_addr(buf):
    import ctypes

    return ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))


def full(d):
    import torch

    n = 65536  # 256 KiB of float32 per saved tensor
    # room for three of them at once, not four
    s = Store([d], capacity=1 << 20, stripe_size=64 << 10, staging_bytes=256 << 10)
    hooks = Offload(s, policy="all", min_bytes=64 << 10)
    x = torch.randn(n, requires_grad=True)
    want = torch.autograd.grad(torch.sin(torch.sin(torch.sin(x))).sum(), x)[0]

    def step_too_big():
        with hooks:  # three tensors fit; a 1 MiB one then does not
            h = torch.sin(torch.sin(torch.sin(x)))
            y = torch.randn(4 * n, requires_grad=True)
            h = h.sum() + torch.sin(y).sum()
        return h

    def step():
        x.grad = None
        with hooks:
            loss = torch.sin(torch.sin(torch.sin(x))).sum()
        hooks.backward(loss)
        hooks.end_step()
        return torch.equal(x.grad, want)

    ex = outcome(step_too_big)
    check("the put that does not fit raises StoreError ENOSPC from the with block (%r)"
          % (ex if not isinstance(ex, RuntimeError) else type(ex)),
          isinstance(ex, StoreError) and ex.errno == errno.ENOSPC)
    del ex
    for i in range(3):
        ex = None
        try:
            ok = step()
        except Exception as e:  # noqa: BLE001
            ok, ex = False, type(e).__name__ + ": " + str(e).splitlines()[0]
        check("step %d after it: the tensors that fit go in, gradients exact%s"
              % (i + 1, " (%s)" % ex if ex else ""), ok)
    hooks.close()
    st = s.stats()
    check("every put of the later steps written (%d puts)" % st["puts"], st["puts"] >= 9)
    s.close()
    check("no store file left after close", not store_files(d))


if __name__ == "__main__":
    cmd, d = sys.argv[1], sys.argv[2]
    {"hold": hold, "reclaim": reclaim, "errors": errors, "full": full}[cmd](d)
    sys.exit(1 if FAILS else 0)
