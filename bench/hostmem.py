# SPDX-License-Identifier: MIT
"""Peak host memory of a command, counted fairly: its resident memory plus the page cache its files hold.

    hostmem.py OUT.json DIR -- COMMAND [ARGS...]

Runs COMMAND and samples, every 10 ms until it exits, its RSS (/proc/PID/statm: resident
pages, anonymous and file-backed) and the bytes of the regular files under DIR that are in the
page cache (mincore over a read-only mapping of each file, which faults nothing in).  A program
that moves its tensors into files (PyTorch's torch.save hooks) frees its RSS but leaves their
bytes in the page cache, memory the machine still holds for it; O_DIRECT leaves none.  OUT gets
``peak_bytes`` (the largest RSS + page cache seen in one sample), ``rss_at_peak`` and
``cache_at_peak`` (its parts), ``peak_rss_sampled``, ``peak_cache`` and ``samples``; the exit
status is COMMAND's.  Sampling misses what lasts under 10 ms, so the figure is a lower bound of
the true peak for every side alike (bench/offload.sh takes the larger of it and VmHWM).

A cgroup's memory.peak would count the same without sampling; this machine's cgroups are the
session's own (v1, shared), so the bench samples instead.
"""

import ctypes
import json
import mmap
import os
import subprocess
import sys
import time

PAGE = os.sysconf("SC_PAGE_SIZE")
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
MAP_FAILED = ctypes.c_void_p(-1).value
LOWBIT = bytes(b & 1 for b in range(256))


def cached_bytes(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return 0  # removed meanwhile (torch.save's files go as they are loaded)
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return 0
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, MAP_FAILED):
            return 0
        try:
            n = (size + PAGE - 1) // PAGE
            vec = ctypes.create_string_buffer(n)
            if libc.mincore(addr, size, vec) != 0:
                return 0
            low = vec.raw.translate(LOWBIT)  # mincore's bit 0: resident
            return (n - low.count(0)) * PAGE
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)


def dir_cached(d):
    total = 0
    for root, _, files in os.walk(d):
        for f in files:
            total += cached_bytes(os.path.join(root, f))
    return total


def rss(pid):
    try:
        with open("/proc/%d/statm" % pid) as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return None


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit("usage: hostmem.py OUT.json DIR -- COMMAND [ARGS...]")
    out, d, cmd = sys.argv[1], sys.argv[2], sys.argv[4:]
    p = subprocess.Popen(cmd)
    best = {"peak_bytes": 0, "rss_at_peak": 0, "cache_at_peak": 0, "peak_rss_sampled": 0,
            "peak_cache": 0, "samples": 0}
    while p.poll() is None:
        r = rss(p.pid)
        if r is None:
            break
        c = dir_cached(d)
        best["samples"] += 1
        best["peak_rss_sampled"] = max(best["peak_rss_sampled"], r)
        best["peak_cache"] = max(best["peak_cache"], c)
        if r + c > best["peak_bytes"]:
            best.update(peak_bytes=r + c, rss_at_peak=r, cache_at_peak=c)
        time.sleep(0.01)
    rc = p.wait()
    with open(out, "w") as f:
        json.dump(best, f)
    sys.exit(rc)


if __name__ == "__main__":
    main()
