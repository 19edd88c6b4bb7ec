# SPDX-License-Identifier: MIT
"""Offload PyTorch's saved activations to storage through llmio's tensor store (SSDTrain-style).

    import llmio_offload

    store = llmio_offload.Store(["/mnt/nvme/offload"], staging_bytes=16 << 20)
    with llmio_offload.offload(store, policy="all", min_bytes=64 << 10,
                               model=net, layers=net.blocks):
        loss = net(x).sum()
    loss.backward()
    print(store.stats())

Forward: every tensor autograd saves for backward goes through ``pack``; one that is large
enough (``min_bytes``), a plain CPU tensor, contiguous and not a parameter is handed to the
store with ``llmio_store_put`` (borrowed: the tensor stays referenced here until the store
reports it on storage, so pack never copies and waits for the device only when more than
``max_inflight_bytes`` are unwritten) and autograd keeps a small record instead of the tensor.
A tensor saved twice (the same storage, offset, shape, strides and version) is written once.
The store places each put at a file offset congruent to the tensor's address modulo 4096, so
its whole 4 KiB units go to the device straight from the tensor with O_DIRECT (torch's CPU
tensors are only 64-byte aligned); only the partial units at its head and tail (under 4 KiB
each) are copied through the store's staging.

Backward reads the tensors in the reverse order of the puts.  From the end of the model's
forward (its forward hook) the hooks read ahead along that order themselves: each tensor gets
a tensor whose data starts at the same offset in its 4 KiB page as the tensor put had, and a
``llmio_store_get`` with ``wait=False`` into it, so the store reads its whole units straight
into it, while the tensors read ahead and not unpacked yet fit ``readahead_bytes`` (default:
the store's read-ahead budget).  Those tensors come from a pool of recycled page-backed blocks
(``torch.frombuffer`` over anonymous mappings the hooks own, back in the pool when torch frees
the tensor, unmapped when dropped),
so backward does not fault in and unmap fresh pages every step; at most ``pool_bytes`` (default
``readahead_bytes``) of free blocks are kept.  ``unpack`` then only waits
(``llmio_store_wait``) for what has not landed; a tensor not read ahead is got the same way
first.  The handle is released when autograd drops the record.  ``pack_s``, ``unpack_s`` and
``wait_s`` count the hooks' time on the compute thread and the part unpack waited for data;
``pack_wait_s`` the part pack waited for writes beyond ``max_inflight_bytes``.
Tensors saved after the model's forward (the loss's) stay in memory unless
``keep_after_forward=False``: backward needs them first.

Without ``model`` (no forward hook) the hooks learn from each step, in ``end_step``, what the
next one does: how many tensors forward offers them (``learned_saves``; the read-ahead starts
after that many, where the forward hook would start it), the order backward unpacks them in
(``learned_order``; the read-ahead follows it), and the last ones backward still waited for at
its start (``learned_keep``, at most ``readahead_bytes``; kept in memory from then on, as
``keep_after_forward`` keeps the loss's).  The first step runs without that knowledge.

Memory: glibc's malloc raises its mmap threshold the first time a large mapped block is freed,
so afterwards torch's activations of up to 32 MiB come from its heap, and memory freed inside
the heap stays resident: the tensors the store has written still count in the peak unless the
next tensors reuse their memory.  torch asks for every CPU tensor with
``posix_memalign(64, size)``, and glibc 2.36 does not give a freed block of it to the next
tensor of the same size (glibc bug 30723).  So from ``__enter__`` to ``__exit__`` torch's CPU
tensors come from ``libllmio_torch.so`` (src/torch/cpu_alloc.cpp, through
``c10::SetCPUAllocator``): plain ``malloc``, 64-byte aligned by hand, whose freed blocks the next
tensors of their size reuse, without page faults.  Each tensor keeps the deleter of the
allocator that made it; nested contexts share it (the last to leave puts torch's back).
``cpu_alloc=False`` leaves torch's; ``cpu_alloc_off`` says why it is not installed (None: it
is); ``cpu_alloc_served`` counts the tensors it made.  The library is found at
``$LLMIO_TORCH_LIB``, else beside the libllmio.so the store loads.

Where torch's own allocator serves the tensors (``cpu_alloc_off`` set), or ``trim_bytes`` is
given, the hooks call glibc's ``malloc_trim(0)`` every ``trim_bytes`` of tensors written in
forward: it hands the free memory of every malloc arena of the process back to the system
(process-wide; no allocator parameter is changed; ``trim_bytes=0`` turns it off; nothing where
the C library has no ``malloc_trim``).  Every page it hands back is faulted in again when torch
reuses it, so the hooks trim no more than the peak needs: not in backward (memory only falls
there: unpack's tensors come from the pool), not at ``end_step`` (what backward freed is reused
by the next forward before its first trim), and by default (``trim_bytes=None``) every quarter
of the bytes the previous forward offloaded, at least ``max_inflight_bytes`` (the first step:
``max_inflight_bytes``); ``trim_bytes`` then holds the interval in use.  ``trims``, ``trim_s``
and ``trim_cpu_s`` count the calls and their time on the compute thread.  Policy ``keep`` never
trims, nor do the hooks where the malloc the program calls is not glibc's (an allocator such as
tcmalloc loaded before the C library: it returns its memory itself); ``trim_off`` says why they
do not trim (None: they do).

Policies: ``keep`` installs the same hooks but stores nothing (the overhead baseline);
``all`` offloads every eligible tensor (SSDTrain); ``window`` offloads like ``all`` except the
activations of the last ``keep_last`` layers of ``layers``, which backward needs first
(SSDTrain never offloads the last module).  ``min_bytes`` is the size threshold of every policy.

Trace: ``Offload(..., trace=PATH)`` writes, per step, one line per layer of ``layers``:
``layer bytes fwd_us bwd_us`` (bytes offloaded in that layer's forward, its forward time and
its backward time, microseconds) after a ``# llmio-offload-trace 1`` header; step boundaries
are lines ``# step N``.  ``llmio run --workload offload --trace PATH`` replays it.

Errors: every failed store call raises ``StoreError`` (``llmio_store``).  torch turns an
exception raised inside its hooks into a ``RuntimeError``; the hooks keep the ``StoreError`` and raise it in its place at the end of the
``with`` block (forward) and from ``Offload.backward(loss)`` (backward), chained to torch's.
A put that failed for lack of space leaves the store usable: the records autograd dropped are
released before every put, so the next step's tensors that fit go in.

The store itself (``Store``, ``StoreError``, the library it loads, cleanup of its files) is
``llmio_store``, the ctypes binding of include/llmio/store.h; its names are re-exported here.

No dependencies beyond the standard library and torch (imported only by ``Offload``).
"""

import collections
import contextlib
import ctypes
import ctypes.util
import mmap
import os
import threading
import time
import weakref

from llmio_store import (  # re-exported: llmio_offload.Store has always worked
    BORROW,
    COPY,
    EV_ERROR,
    EV_GOT,
    EV_PUT,
    ORDER_LIST,
    ORDER_NONE,
    ORDER_REVERSE,
    Store,
    StoreError,
    StoreWarning,
    find_library,
)

__all__ = ["Store", "Offload", "offload", "find_library", "StoreError", "StoreWarning"]
# the binding's constants, module attributes here since before the split
_REEXPORTED = (BORROW, COPY, EV_ERROR, EV_GOT, ORDER_LIST, ORDER_NONE, ORDER_REVERSE)


class _Saved:
    """What autograd keeps instead of an offloaded tensor."""

    __slots__ = ("owner", "handle", "shape", "dtype", "nbytes", "pad", "layer", "pos", "tensor",
                 "pending", "ahead", "__weakref__")

    def __init__(self, owner, handle, shape, dtype, nbytes, pad, layer, pos):
        self.owner, self.handle, self.layer, self.pos = owner, handle, layer, pos
        self.shape, self.dtype, self.nbytes = shape, dtype, nbytes
        self.pad = pad  # the put's offset in its 4 KiB page: the store's file offset mod 4096
        self.tensor = None  # the data once read back (a tensor saved twice is read once)
        self.pending = False  # a get with wait=False is filling tensor
        self.ahead = False  # read ahead, not unpacked yet (counts in the read-ahead window)

    def __del__(self):
        # autograd dropped the last reference: the extent is free again.  Only queued here:
        # this may run inside another store call or on another thread.  A read still landing
        # in the tensor keeps the tensor alive until it has (the release waits for it).
        o = self.owner
        o._dead.append((self.handle, self.tensor if self.pending else None))
        if self.ahead:
            o._ahead_bytes -= self.nbytes


class _Pool:
    """Page-backed blocks for the tensors unpack returns, recycled across steps.

    ``take`` hands out a tensor whose data starts ``pad`` bytes into a 4 KiB page (the offset the
    store placed the tensor's bytes at, so that it reads the whole units straight into it).  The
    tensor is ``torch.frombuffer`` over a ctypes view of a block the pool owns; when torch frees
    the tensor's storage it drops the view, whose finalizer gives the block back.  A block is
    reused for any tensor of the same number of pages: its pages stay mapped and resident, so
    backward neither faults fresh pages in nor unmaps them every step.  Free blocks beyond
    ``cap`` bytes are dropped (their memory counts in the process's peak).

    Each block is an anonymous mapping of its own (``mmap``), not memory from torch's allocator:
    glibc's malloc serves blocks of this size from its heap once its dynamic mmap threshold has
    risen (it does after the first large free), and memory freed inside the heap is not given
    back to the system, so a dropped block would stay in the process's resident memory.  A
    dropped mapping is unmapped at once.  When a freed block does not fit beside the free ones,
    the free blocks given back longest ago are dropped to make room: a size the steps no longer
    ask for (the loss's tensor, offloaded in the first step and kept in memory from the second
    on) would otherwise hold the pool for good."""

    def __init__(self, torch, cap):
        self._torch, self.cap = torch, int(cap)
        self._free = {}  # bytes of the block -> [mappings], the last given back last
        self._age = collections.OrderedDict()  # id(mapping) -> (bytes, mapping), oldest first
        self._views = {}  # bytes of the block -> ctypes array type over a block
        self.free_bytes = 0
        self.hits = self.misses = 0

    def take(self, shape, dtype, nbytes, pad):
        torch = self._torch
        size = (pad + nbytes + 4095) & ~4095
        free = self._free.get(size)
        if free:
            back = free.pop()
            del self._age[id(back)]
            self.free_bytes -= size
            self.hits += 1
        else:  # page-aligned, unmapped when the last reference goes
            back = mmap.mmap(-1, size)
            self.misses += 1
        view = self._views.get(size)
        if view is None:  # a subclass: ctypes arrays themselves take no weak references
            view = self._views[size] = type("_Block", (ctypes.c_char * size,), {})
        block = view.from_buffer(back)
        weakref.finalize(block, self._give, size, back)
        t = torch.frombuffer(block, dtype=torch.uint8, count=nbytes, offset=pad)
        return t.view(dtype).view(shape)

    def _give(self, size, back):
        # torch freed the tensor (any thread, with the GIL held): keep the block within cap,
        # dropping the oldest free blocks for it
        if size > self.cap:
            return
        while self.free_bytes + size > self.cap:
            _, (old_size, old) = self._age.popitem(last=False)
            self._free[old_size].remove(old)
            self.free_bytes -= old_size
        self._free.setdefault(size, []).append(back)
        self._age[id(back)] = (size, back)
        self.free_bytes += size


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _glibc_malloc(libc):
    """Is the malloc the program calls glibc's?  An allocator loaded before the C library
    (tcmalloc or jemalloc through LD_PRELOAD, a sanitizer's) takes its place for every caller,
    torch's tensors included.  Asked of glibc itself: a block from the malloc every call reaches
    shows in glibc's own counters (mallinfo2) only if glibc served it.  (Comparing addresses
    cannot tell: a non-PIE program's PLT entry stands for malloc's address.)"""
    try:
        info = libc.mallinfo2
    except AttributeError:
        return True  # glibc before 2.33: nothing to ask, taken as the C library's own
    info.restype = _MallInfo2
    first = ctypes.CDLL(None)
    first.malloc.restype, first.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    first.free.restype, first.free.argtypes = None, [ctypes.c_void_p]
    size = 1 << 20
    m0 = info()
    p = first.malloc(size)
    m1 = info()
    first.free(p)
    return (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd) >= size


def _malloc_trim():
    """(glibc's malloc_trim, None) or (None, why not): malloc_trim gives the free memory inside
    glibc's heaps back to the system (madvise), not only the top of the heap.  Only where glibc's
    malloc is the one the program calls: another allocator serves torch's tensors from memory of
    its own, which it returns itself, and malloc_trim would only comb glibc's arenas."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None, "the C library has no malloc_trim (not glibc)"
    if not _glibc_malloc(libc):
        return None, "malloc is not glibc's (an allocator loaded before the C library)"
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_size_t]
    return fn, None


def _torch_lib_path():
    """Where libllmio_torch.so is: $LLMIO_TORCH_LIB, else beside the libllmio.so the store
    loads, else the installed one."""
    env = os.environ.get("LLMIO_TORCH_LIB")
    if env:
        return env
    path = find_library()[0]
    if os.sep in path:
        return os.path.join(os.path.dirname(path), "libllmio_torch.so")
    return ctypes.util.find_library("llmio_torch") or "libllmio_torch.so"


_REUSED = ("torch's tensors come from libllmio_torch's malloc, which reuses freed blocks "
           "(trim_bytes=N trims anyway)")
_SLOT_HELD = "another CPU allocator holds torch's slot (set with a higher priority)"
_cpu_alloc = None  # (libllmio_torch, None) or (None, why not): found out once a process
_cpu_alloc_users = 0  # Offload contexts active with it installed (under _cpu_alloc_lock)
_cpu_alloc_lock = threading.Lock()


def _cpu_allocator(torch):
    """(libllmio_torch, None) or (None, why the hooks cannot hand torch its allocator)."""
    global _cpu_alloc
    with _cpu_alloc_lock:
        if _cpu_alloc is None:
            _cpu_alloc = _probe_cpu_allocator(torch)
        return _cpu_alloc


def _probe_cpu_allocator(torch):
    # The library is not linked against libc10: the libc10 torch loaded is made global first, so
    # the library binds to that one (never a second copy; a torch built with another C++ ABI
    # leaves a symbol unresolved, and loading fails with the reason).
    c10 = os.path.join(os.path.dirname(torch.__file__), "lib", "libc10.so")
    try:
        ctypes.CDLL(c10, mode=os.RTLD_GLOBAL | os.RTLD_NOLOAD)
    except OSError as ex:
        return None, "torch's libc10 is not loaded from %s (%s)" % (c10, ex)
    path = _torch_lib_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as ex:
        return None, ("cannot load %s (%s): build llmio where torch's headers are (Debian: "
                      "libtorch-dev), or set LLMIO_TORCH_LIB" % (path, ex))
    lib.llmio_torch_alloc_install.restype = ctypes.c_int
    lib.llmio_torch_alloc_served.restype = ctypes.c_ulonglong
    if not lib.llmio_torch_alloc_install():
        return None, _SLOT_HELD
    try:  # torch calls it: a tensor made now comes from it, 64-byte aligned as torch's own
        n0 = lib.llmio_torch_alloc_served()
        probe = torch.empty(64, dtype=torch.uint8)
        ok = lib.llmio_torch_alloc_served() > n0 and probe.data_ptr() % 64 == 0
        del probe
    finally:
        lib.llmio_torch_alloc_restore()
    if not ok:
        return None, "torch's CPU tensors did not come from %s" % path
    return lib, None


class _Kept:
    """A tensor kept in memory while tracing (so that unpack can time the layer's backward)."""

    __slots__ = ("layer", "tensor")

    def __init__(self, layer, tensor):
        self.layer, self.tensor = layer, tensor


class Offload:
    """The saved-tensor hooks and module hooks for one model (see the module's docstring).

    Counters after a run: ``offloaded_bytes`` / ``offloaded`` (tensors handed to the store),
    ``kept_bytes`` / ``kept`` (saved tensors left in memory), ``dedup`` (saves that reused a
    tensor already offloaded), ``edge_bytes`` (the offloaded bytes in partial 4 KiB units at a
    tensor's head and tail: what the store stages, once each way), ``unit_bytes`` (the whole
    4 KiB units the offloaded tensors span at their addresses: what the store writes and reads
    on the device), ``pool_hits`` /
    ``pool_misses`` (unpack's tensors from recycled blocks / from fresh memory)."""

    POLICIES = ("keep", "all", "window")

    def __init__(self, store, policy="all", min_bytes=64 << 10, model=None, layers=None,
                 keep_last=1, max_inflight_bytes=16 << 20, copy=False, trace=None,
                 readahead_bytes=None, keep_after_forward=True, pool_bytes=None,
                 trim_bytes=None, cpu_alloc=True):
        import torch  # (fails here, not at import, where torch is absent)

        if policy not in self.POLICIES:
            raise ValueError("policy %r: use one of %s" % (policy, ", ".join(self.POLICIES)))
        if policy != "keep" and store is None:
            raise ValueError("policy %r needs a Store" % policy)
        if policy == "window" and not layers:
            raise ValueError("policy 'window' needs layers= (the model's blocks, in order)")
        self.store, self.policy, self.min_bytes = store, policy, int(min_bytes)
        self.model, self.layers = model, list(layers or [])
        self.keep_last, self.copy = int(keep_last), bool(copy)
        self.max_inflight_bytes = int(max_inflight_bytes)
        # the window of tensors read ahead: by default the store's read-ahead budget
        if readahead_bytes is None:
            readahead_bytes = store.readahead_bytes if store is not None else 0
        self.readahead_bytes = int(readahead_bytes)
        # free blocks kept for unpack's tensors (0: a fresh torch.empty for each, never pooled)
        self._pool = _Pool(torch, self.readahead_bytes if pool_bytes is None else pool_bytes)
        # tensors saved after the model's forward (the loss's) are the first backward needs:
        # offloaded, they would be written and at once read back while backward waits
        self.keep_after_forward = bool(keep_after_forward)
        self._fwd_over = False
        # Without the model's forward hook the hooks learn from each step (end_step) what the
        # next does: how many tensors forward offers them (learned_saves: the read-ahead starts
        # after that many, where the model's forward hook would start it), the order backward
        # unpacks them in (learned_order: positions in forward's order; the read-ahead follows
        # it), and which of the last ones backward waited for at its start although the
        # read-ahead had started (learned_keep: kept in memory from the next step on, as
        # keep_after_forward keeps the loss's with the model; at most readahead_bytes).
        self.learned_saves = self.learned_order = None
        self.learned_keep, self._learned_keep_bytes = set(), 0
        self._bwd_started = False
        self._npos = 0  # eligible tensors this step (their positions)
        self._unpacked = []  # positions in the order unpack met them
        self._tail, self._tail_open = [], True  # positions backward waited for at its start
        self._ahead_at_end = False  # this step's read-ahead started at the learned forward end
        # torch's CPU tensors from libllmio_torch's malloc while the hooks are active (every
        # policy: keep is the hooks' overhead, this included); cpu_alloc_off: why not (None: they
        # are)
        if cpu_alloc:
            self._cpu_alloc, self.cpu_alloc_off = _cpu_allocator(torch)
        else:
            self._cpu_alloc, self.cpu_alloc_off = None, "cpu_alloc=False"
        # Memory torch frees after its tensor is written returns to glibc's heap, which keeps
        # it resident.  Through libllmio_torch's malloc the next tensors of its size reuse it,
        # so by default (trim_bytes=None) the hooks leave it there: handing it back would cost
        # a page fault for every page taken again.  Through torch's own posix_memalign they
        # mostly do not (glibc bug 30723), and malloc_trim gives it back every trim_bytes
        # written in forward (0: never).  A trim gives back all the heap's free memory, not
        # only the written tensors', so the default interval grows with the step: a quarter of
        # what the last forward offloaded (at most that much sits freed but resident between
        # two trims, so most of the offloaded bytes stay off the peak), at least
        # max_inflight_bytes (what the hooks let stay resident behind the device anyway).
        # Backward never trims: its peak is at its start, and unpack's tensors come from the
        # pool, not the heap.  Nor does end_step: what backward freed, handed back there, would
        # be faulted in again by the next forward's first tensors, which reuse it before the
        # first trim anyway.
        self._trim_auto = trim_bytes is None
        self.trim_bytes = self.max_inflight_bytes if trim_bytes is None else int(trim_bytes)
        self._trim_fn, self.trim_off = None, None  # trim_off: why the hooks do not trim
        if policy == "keep":
            self.trim_off = "policy keep stores nothing"
        elif self.trim_bytes <= 0:
            self.trim_off = "trim_bytes=0"
        elif self._trim_auto and self._cpu_alloc is not None:
            self.trim_off = _REUSED
        else:
            self._trim_fn, self.trim_off = _malloc_trim()
        self._cpu_alloc_on = False
        self._trim_due = 0
        self._step_offloaded0 = 0  # offloaded_bytes when the step began
        self.trims, self.trim_s, self.trim_cpu_s = 0, 0.0, 0.0
        self.offloaded_bytes = self.offloaded = self.kept_bytes = self.kept = self.dedup = 0
        self.edge_bytes = self.unit_bytes = 0
        # time in the hooks on the compute thread, and the part of it unpack waited for data
        self.pack_s = self.unpack_s = self.wait_s = self.pack_wait_s = 0.0
        self.peak_ahead_bytes = 0
        self._torch = torch
        self._Tensor, self._Parameter = torch.Tensor, torch.nn.Parameter
        self._ahead = []  # weakrefs to _Saved in put order
        self._order = []  # indices into _ahead in the order to read ahead (backward's)
        self._ra_i = 0  # the next to read ahead is _ahead[_order[_ra_i]]
        self._ahead_bytes = 0  # read ahead and not unpacked yet
        self._inflight = {}  # handle -> tensor, until the store has written it
        self._inflight_bytes = 0
        self._live = {}  # identity -> weakref to _Saved, for dedup within a step
        self._dead = []  # (handle, tensor still being read into) of records autograd dropped
        self._layer = -1
        self._hooks = []
        self._params = set()
        self._trace = open(trace, "w") if trace else None
        self._error = None  # the StoreError a hook raised, which torch hands on as RuntimeError
        self._step = 0
        self._tl = {}  # layer -> [bytes, fwd_start, fwd_us, bwd_first_unpack]
        if self._trace:
            self._trace.write("# llmio-offload-trace 1\n# layer bytes fwd_us bwd_us\n")
        self._ctx = None

    # --- hooks ---------------------------------------------------------------------------
    def _offloadable(self, t):
        """Could the tensor go to the store at all (policy ``all``)?"""
        if isinstance(t, self._Parameter) or t.data_ptr() in self._params:
            return False  # parameters stay (and are not the activations to move)
        if t.device.type != "cpu" or t.is_sparse or not t.is_contiguous():
            return False
        return t.numel() * t.element_size() >= self.min_bytes

    def _eligible(self, t):
        if self.policy == "keep" or self._fwd_over or not self._offloadable(t):
            return False
        if self.policy == "window":
            # outside the blocks (embedding, head) and in the last keep_last blocks: kept, as
            # SSDTrain keeps the last module (backward needs it first)
            return 0 <= self._layer < len(self.layers) - self.keep_last
        return True

    def _release_dead(self):
        """Release the records autograd dropped (queued by _Saved.__del__)."""
        store = self.store
        while self._dead:
            h, landing = self._dead.pop()
            # a put still in flight keeps reading its borrowed tensor after the release (the
            # store does not wait for it): the tensor stays in _inflight until its EV_PUT
            if landing is not None:
                try:
                    store.wait(h)  # the read must land before its tensor can go
                except StoreError:
                    pass  # nobody wants the data any more
            store.release(h)

    def _service(self, block=False):
        """Collect write completions (freeing borrowed tensors) and queued releases."""
        store = self.store
        self._release_dead()
        while True:
            for h, typ, res in store.poll():
                if res < 0:
                    raise StoreError(-res, "llmio store: handle %d failed: %s"
                                     % (h, os.strerror(-res)))
                if typ == EV_PUT:
                    t = self._inflight.pop(h, None)
                    if t is not None:
                        n = t.numel() * t.element_size()
                        self._inflight_bytes -= n
                        del t  # (torch may free it now: then it counts for the trim)
                        if not self._bwd_started:
                            self._progress(n)
            if not block or self._inflight_bytes <= self.max_inflight_bytes:
                return
            w0 = time.perf_counter()
            store.wait_event(0.05)
            self.pack_wait_s += time.perf_counter() - w0

    def _progress(self, nbytes):
        """nbytes more written in forward: trim every trim_bytes."""
        if self._trim_fn is not None:
            self._trim_due += nbytes
            if self._trim_due >= self.trim_bytes:
                self._trim()

    def _trim(self):
        t0, c0 = time.perf_counter(), time.thread_time()
        self._trim_fn(0)
        self._trim_due = 0
        self.trims += 1
        self.trim_s += time.perf_counter() - t0
        self.trim_cpu_s += time.thread_time() - c0

    def _pack(self, t):
        t0 = time.perf_counter()
        try:
            return self._pack_one(t)
        except StoreError as ex:
            self._error = self._error or ex  # torch raises a RuntimeError in its place
            raise
        finally:
            self.pack_s += time.perf_counter() - t0

    def _unpack(self, obj):
        try:
            return self._unpack_one(obj)
        except StoreError as ex:
            self._error = self._error or ex
            raise

    def _store_error(self, ex):
        """The StoreError behind torch's RuntimeError ex (raised in a hook), or None."""
        err, self._error = self._error, None
        if err is not None and isinstance(ex, RuntimeError) and "StoreError" in str(ex):
            return err
        return None

    def backward(self, tensor, *args, **kw):
        """``tensor.backward(...)``, raising a store failure in an unpack as ``StoreError``
        (torch hands it on as a ``RuntimeError``)."""
        self._error = None
        try:
            tensor.backward(*args, **kw)
        except RuntimeError as ex:
            err = self._store_error(ex)
            if err is None:
                raise
            try:
                raise err from ex
            finally:
                del err  # no cycle through this frame: the step's tensors go at once

    def _pack_one(self, t):
        if not self._eligible(t):
            self.kept += 1
            self.kept_bytes += t.numel() * t.element_size()
            if self._trace and self._layer in self._tl and self._offloadable(t):
                # the trace holds what policy "all" would move, whatever this run's policy
                self._tl[self._layer][0] += t.numel() * t.element_size()
                return _Kept(self._layer, t)
            return t
        ptr = t.data_ptr()
        key = (ptr, t.storage_offset(), t.shape, t.stride(), t.dtype, t._version)
        # the same memory only while the first tensor lives (its address could be reused after)
        refs = self._live.get(key)
        rec = refs[1]() if refs is not None and refs[1] is not None and refs[0]() is not None else None
        if rec is not None:
            self.dedup += 1
            return rec
        if refs is not None and refs[1] is None and refs[0]() is not None:
            self.dedup += 1  # a tensor learned_keep keeps, saved again: kept again
            return t
        nbytes = t.numel() * t.element_size()
        pos = self._npos
        self._npos += 1
        if pos in self.learned_keep:  # backward waited for it at its start last time
            self.kept += 1
            self.kept_bytes += nbytes
            self._live[key] = (weakref.ref(t), None)
            self._forward_learned_over()
            return t
        # the space of records dropped since (a step cut short by a failed put) comes back
        # before this put asks for it
        self._release_dead()
        if self.copy:
            h = self.store.put(ptr, nbytes, borrow=False)
        else:
            h = self.store.put(ptr, nbytes, borrow=True)
            self._inflight[h] = t  # referenced until on storage: pack never copies
            self._inflight_bytes += nbytes
        rec = _Saved(self, h, t.shape, t.dtype, nbytes, ptr & 4095, self._layer, pos)
        wrec = weakref.ref(rec)
        self._live[key] = (weakref.ref(t), wrec)
        self._ahead.append(wrec)
        self.offloaded += 1
        self.offloaded_bytes += nbytes
        # its bytes in partial 4 KiB units at its head and tail (at its address): what the
        # store copies through staging, the rest moving straight from and into tensors
        head, tail = -ptr & 4095, (ptr + nbytes) & 4095
        self.edge_bytes += nbytes if nbytes - tail <= head else head + tail
        self.unit_bytes += ((ptr & 4095) + nbytes + 4095) & ~4095
        if self._layer in self._tl:
            self._tl[self._layer][0] += nbytes
        self._service(block=not self.copy)
        self._forward_learned_over()
        return rec

    def _forward_learned_over(self):
        if self.model is None and self._npos == self.learned_saves and not self._bwd_started:
            self._ahead_at_end = True
            self._start_read_ahead()  # forward is over, as the last step taught

    def _read_ahead(self):
        """Start gets (wait=False) into aligned tensors along the backward order (the reverse
        of the puts, or the order learned from the last step), while the tensors read ahead and
        not unpacked yet fit readahead_bytes: the store reads straight into them, and unpack
        waits only for what has not landed."""
        store, ahead, order = self.store, self._ahead, self._order
        while self._ra_i < len(order):
            rec = ahead[order[self._ra_i]]()
            if rec is not None and rec.tensor is None:
                if self._ahead_bytes and self._ahead_bytes + rec.nbytes > self.readahead_bytes:
                    return
                out = self._pool.take(rec.shape, rec.dtype, rec.nbytes, rec.pad)
                store.get(rec.handle, out.data_ptr(), rec.nbytes, wait=False)
                rec.tensor, rec.pending, rec.ahead = out, True, True
                self._ahead_bytes += rec.nbytes
                if self._ahead_bytes > self.peak_ahead_bytes:
                    self.peak_ahead_bytes = self._ahead_bytes
            self._ra_i += 1

    def _unpack_one(self, obj):
        if type(obj) is not _Saved:
            if isinstance(obj, _Kept):
                self._mark_bwd(obj.layer)
                return obj.tensor
            return obj
        t0 = time.perf_counter()
        self._bwd_started = True
        self._unpacked.append(obj.pos)
        if self._trace:
            self._mark_bwd(obj.layer)
        if obj.ahead:
            obj.ahead = False
            self._ahead_bytes -= obj.nbytes
        if obj.tensor is None:
            # not read ahead (saved after the model's forward, the loss, or out of order):
            # its get goes first, then the read-ahead from the end of the order (skipping
            # what has its data) queues behind it and overlaps the wait
            obj.tensor = self._pool.take(obj.shape, obj.dtype, obj.nbytes, obj.pad)
            self.store.get(obj.handle, obj.tensor.data_ptr(), obj.nbytes, wait=False)
            obj.pending = True
            if len(self._order) != len(self._ahead):
                self._build_order()
            self._ra_i = 0
        self._read_ahead()
        tail = self._tail_open and self.model is None
        if obj.pending:
            stalls = self.store.stats()["stalls"] if tail else 0
            w0 = time.perf_counter()
            self.store.wait(obj.handle)
            self.wait_s += time.perf_counter() - w0
            obj.pending = False
            if tail and self.store.stats()["stalls"] > stalls:
                self._tail.append((obj.pos, obj.nbytes))  # waited for at backward's start
                tail = False
        if tail:
            self._tail_open = False
        self._service()
        self.unpack_s += time.perf_counter() - t0
        return obj.tensor

    @property
    def cpu_alloc_served(self):
        """The tensors torch made with libllmio_torch's allocator in this process (0 without it)."""
        lib = _cpu_alloc[0] if _cpu_alloc else None
        return lib.llmio_torch_alloc_served() if lib is not None else 0

    @property
    def pool_hits(self):
        return self._pool.hits

    @property
    def pool_misses(self):
        return self._pool.misses

    def _mark_bwd(self, layer):
        tl = self._tl.get(layer)
        if tl is not None and tl[3] is None:
            tl[3] = time.perf_counter()  # the layer's backward starts with its first unpack

    def _pre(self, idx):
        def hook(mod, inp):
            self._layer = idx
            self._tl.setdefault(idx, [0, 0.0, 0.0, None])[1] = time.perf_counter()

        return hook

    def _post(self, idx):
        def hook(mod, inp, out):
            tl = self._tl[idx]
            tl[2] = (time.perf_counter() - tl[1]) * 1e6
            self._layer = -1

        return hook

    def _forward_start(self, mod, inp):
        self._fwd_over = False

    def _forward_done(self, mod, inp, out):
        # The model's forward hook: backward reads the tensors in the reverse order of the
        # puts, starting with the last; reading ahead starts now, so that the first unpacks
        # find their data (the gets queue behind their puts in the store).
        self._fwd_over = self.keep_after_forward
        self._start_read_ahead()

    def _build_order(self):
        """The read-ahead's order: the positions backward unpacked last step, in its order,
        then whatever else this step put, from the last put back."""
        n = len(self._ahead)
        order = []
        if self.learned_order:
            at = {}
            for i, w in enumerate(self._ahead):
                rec = w()
                if rec is not None:
                    at[rec.pos] = i
            order = [at.pop(p) for p in self.learned_order if p in at]
            seen = set(order)
            order += [i for i in range(n - 1, -1, -1) if i not in seen]
        else:
            order = list(range(n - 1, -1, -1))
        self._order, self._ra_i = order, 0

    def _start_read_ahead(self):
        if self.store is not None and self.policy != "keep":
            t0 = time.perf_counter()
            self._build_order()
            self._read_ahead()
            self.pack_s += time.perf_counter() - t0

    def _learn(self):
        """What this step (no model given) teaches the next: see learned_saves in __init__."""
        self.learned_saves = self._npos
        seen = set()
        self.learned_order = [p for p in self._unpacked if not (p in seen or seen.add(p))]
        # (a step whose read-ahead started only at backward's first unpack, the first, waits
        # at backward's start for reasons the next step will not have)
        for p, n in self._tail if self._ahead_at_end else ():
            if self._learned_keep_bytes + n <= self.readahead_bytes:
                self.learned_keep.add(p)
                self._learned_keep_bytes += n

    def end_step(self):
        """Call after backward: writes the trace's lines of this step and releases what is left."""
        if self.store is not None:
            self._service()
        step_bytes = self.offloaded_bytes - self._step_offloaded0
        self._step_offloaded0 = self.offloaded_bytes
        if self._trim_auto and step_bytes:
            self.trim_bytes = max(self.max_inflight_bytes, step_bytes // 4)
        if self._trace and self._tl:
            self._trace.write("# step %d\n" % self._step)
            idx = sorted(self._tl)
            end = time.perf_counter()
            for i in idx:
                b, _, fwd, first = self._tl[i]
                nxt = self._tl[i - 1][3] if i - 1 in self._tl else None
                bwd = ((nxt if nxt else end) - first) * 1e6 if first else 2 * fwd
                self._trace.write("%d %d %.0f %.0f\n" % (i, b, fwd, max(bwd, 0.0)))
            self._trace.flush()
        self._tl = {}
        if self.model is None and self._unpacked:
            self._learn()
        self._ahead, self._order, self._ra_i = [], [], 0
        self._bwd_started = False
        self._npos, self._unpacked, self._tail, self._tail_open = 0, [], [], True
        self._ahead_at_end = False
        self._live.clear()
        self._step += 1

    def __enter__(self):
        import torch

        if self.model is not None:
            self._params = {p.data_ptr() for p in self.model.parameters()}
            self._hooks.append(self.model.register_forward_pre_hook(self._forward_start))
            self._hooks.append(self.model.register_forward_hook(self._forward_done))
        for i, m in enumerate(self.layers):
            self._hooks.append(m.register_forward_pre_hook(self._pre(i)))
            self._hooks.append(m.register_forward_hook(self._post(i)))
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
        self._error = None
        self._cpu_alloc_enter()
        return self

    def _cpu_alloc_enter(self):
        global _cpu_alloc_users
        if self._cpu_alloc is None:
            return
        with _cpu_alloc_lock:
            if _cpu_alloc_users == 0 and not self._cpu_alloc.llmio_torch_alloc_install():
                held = True
            else:
                held = False
                _cpu_alloc_users += 1
                self._cpu_alloc_on = True
        if held:
            self.cpu_alloc_off = _SLOT_HELD
            self._cpu_alloc = None
            if self.trim_off == _REUSED:  # torch's allocator after all: trim by default
                self._trim_fn, self.trim_off = _malloc_trim()

    def _cpu_alloc_exit(self):
        # the tensors it made keep its deleter: they are freed through it whenever they go
        global _cpu_alloc_users
        if self._cpu_alloc_on:
            self._cpu_alloc_on = False
            with _cpu_alloc_lock:
                _cpu_alloc_users -= 1
                if _cpu_alloc_users == 0:
                    self._cpu_alloc.llmio_torch_alloc_restore()

    def __exit__(self, *exc):
        self._cpu_alloc_exit()
        self._ctx.__exit__(*exc)
        for h in self._hooks:
            h.remove()
        self._hooks = []
        err = self._store_error(exc[1])
        if err is not None:
            try:
                raise err from exc[1]
            finally:
                del err, exc  # no cycle through this frame: the step's tensors go at once
        return False

    def close(self):
        """Wait for every write, release every handle still held; close the trace."""
        if self.store is not None:
            self.store.flush()
            self._service()
            self._inflight.clear()
            self._inflight_bytes = 0
        if self._trace:
            self._trace.close()
            self._trace = None


@contextlib.contextmanager
def offload(store, **kw):
    """``with offload(store, policy=..., min_bytes=..., model=..., layers=...) as o:`` around
    forward (and backward); see ``Offload``."""
    o = Offload(store, **kw)
    with o:
        yield o
