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
reports it on storage, so pack never copies and never waits for the device) and autograd keeps
a small record instead of the tensor.  A tensor saved twice (the same storage, offset, shape,
strides and version) is written once.  At the end of the forward pass the model's forward hook
gives the store the backward order of the handles (the reverse of the puts) so that it reads
ahead along it, within its read-ahead budget.  Backward: ``unpack`` allocates ``torch.empty``
and ``llmio_store_get`` fills it (the store reads straight into it when the address is
aligned for O_DIRECT, otherwise through its staging buffers); the handle is released when
autograd drops the record.

Policies: ``keep`` installs the same hooks but stores nothing (the overhead baseline);
``all`` offloads every eligible tensor (SSDTrain); ``window`` offloads like ``all`` except the
activations of the last ``keep_last`` layers of ``layers``, which backward needs first
(SSDTrain never offloads the last module).  ``min_bytes`` is the size threshold of every policy.

The library: ``$LLMIO_LIB`` when set, else ``libllmio.so`` in the build folders next to this
file (build/, build-*/), else the installed one (the dynamic loader's search path).

Trace: ``Offload(..., trace=PATH)`` writes, per step, one line per layer of ``layers``:
``layer bytes fwd_us bwd_us`` (bytes offloaded in that layer's forward, its forward time and
its backward time, microseconds) after a ``# llmio-offload-trace 1`` header; step boundaries
are lines ``# step N``.  ``llmio run --workload offload --trace PATH`` replays it.

No dependencies beyond the standard library and torch (imported only by ``offload``).
"""

import contextlib
import ctypes
import ctypes.util
import glob
import os
import select
import threading
import time
import weakref

__all__ = ["Store", "Offload", "offload", "find_library", "StoreError"]

_ERROR_MSG_MAX = 1024  # LLMIO_ERROR_MSG_MAX, include/llmio/common.h

EV_PUT, EV_GOT, EV_ERROR = 1, 2, 3
ORDER_NONE, ORDER_REVERSE, ORDER_LIST = 0, 1, 2
COPY, BORROW = 0, 1


class StoreError(OSError):
    """A store call failed: errno and the library's one-line message."""


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * _ERROR_MSG_MAX)]


class _Opts(ctypes.Structure):  # struct llmio_store_opts, include/llmio/store.h
    _fields_ = [
        ("opts_size", ctypes.c_size_t),
        ("engine", ctypes.c_char * 32),
        ("engine_opts", ctypes.c_char * 512),
        ("targets", ctypes.POINTER(ctypes.c_char_p)),
        ("ntargets", ctypes.c_uint32),
        ("capacity", ctypes.c_uint64),
        ("stripe_size", ctypes.c_uint64),
        ("direct", ctypes.c_bool),
        ("iodepth", ctypes.c_uint32),
        ("staging_bytes", ctypes.c_uint64),
        ("fast_bytes", ctypes.c_uint64),
        ("readahead_bytes", ctypes.c_uint64),
        ("allow_destructive", ctypes.c_bool),
        ("force", ctypes.c_bool),
    ]


# The library may have grown fields at the end: llmio_store_opts_init() writes its own size, so
# it gets room for them (their defaults then stand).
class _OptsRoom(ctypes.Structure):
    _fields_ = [("o", _Opts), ("room", ctypes.c_char * 4096)]


class _Event(ctypes.Structure):
    _fields_ = [("handle", ctypes.c_uint64), ("type", ctypes.c_int), ("res", ctypes.c_int)]


class _Stats(ctypes.Structure):  # struct llmio_store_stats
    _fields_ = [
        ("stats_size", ctypes.c_size_t),
        ("puts", ctypes.c_uint64),
        ("gets", ctypes.c_uint64),
        ("bytes_put", ctypes.c_uint64),
        ("bytes_got", ctypes.c_uint64),
        ("device_bytes_written", ctypes.c_uint64),
        ("device_bytes_read", ctypes.c_uint64),
        ("stalls", ctypes.c_uint64),
        ("stall_ns", ctypes.c_uint64),
        ("io_busy_ns", ctypes.c_uint64),
        ("overlap", ctypes.c_double),
        ("peak_staging_bytes", ctypes.c_uint64),
        ("prefetch_hits", ctypes.c_uint64),
        ("cpu_ns", ctypes.c_uint64),
        ("peak_readahead_bytes", ctypes.c_uint64),
    ]


def find_library():
    """The path (or loader name) of libllmio.so that ``Store`` loads, and where it came from."""
    env = os.environ.get("LLMIO_LIB")
    if env:
        return env, "$LLMIO_LIB"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for d in ["build"] + sorted(os.path.basename(p) for p in glob.glob(os.path.join(root, "build-*"))):
        p = os.path.join(root, d, "libllmio.so")
        if os.path.exists(p):
            return p, "the build folder " + os.path.join(root, d)
    return ctypes.util.find_library("llmio") or "libllmio.so", "the installed library"


_lib = None
_lib_lock = threading.Lock()


def _load():
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        path, where = find_library()
        try:
            lib = ctypes.CDLL(path)
        except OSError as ex:
            raise OSError(
                "cannot load libllmio (%s, from %s): %s; build it (scripts/bootstrap.sh build), "
                "install it, or set LLMIO_LIB=/path/to/libllmio.so" % (path, where, ex)
            ) from None
        if not hasattr(lib, "llmio_store_create"):
            raise OSError(
                "%s (from %s) has no tensor store (llmio_store_create): it predates issue 17; "
                "rebuild it or point LLMIO_LIB at a newer libllmio.so" % (path, where)
            )
        E = ctypes.POINTER(_Error)
        S = ctypes.c_void_p
        u64, pu64 = ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)
        sig = {
            "llmio_store_opts_init": (None, [ctypes.POINTER(_OptsRoom)]),
            "llmio_store_create": (ctypes.c_int, [ctypes.POINTER(_OptsRoom), ctypes.POINTER(S), E]),
            "llmio_store_destroy": (None, [S]),
            "llmio_store_put": (ctypes.c_int, [S, ctypes.c_void_p, u64, ctypes.c_uint, pu64, E]),
            "llmio_store_get": (ctypes.c_int, [S, u64, ctypes.c_void_p, u64, ctypes.c_bool, E]),
            "llmio_store_prefetch": (ctypes.c_int, [S, u64, E]),
            "llmio_store_hint": (ctypes.c_int, [S, ctypes.c_int, pu64, ctypes.c_size_t, E]),
            "llmio_store_release": (ctypes.c_int, [S, u64, E]),
            "llmio_store_poll": (ctypes.c_int, [S, ctypes.POINTER(_Event), ctypes.c_size_t]),
            "llmio_store_eventfd": (ctypes.c_int, [S]),
            "llmio_store_flush": (ctypes.c_int, [S, E]),
            "llmio_store_stats": (ctypes.c_int, [S, ctypes.POINTER(_Stats)]),
        }
        for name, (res, args) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        _lib = lib
        return lib


def _raise(rc, err, what):
    msg = err.msg.decode("utf-8", "replace") if err is not None else ""
    raise StoreError(-rc, "%s: %s" % (what, msg or os.strerror(-rc)))


class Store:
    """One llmio tensor store (``llmio_store_create``); ``close()`` or ``with`` removes its files.

    Not thread-safe against itself beyond a lock around each call (the C store is driven by one
    caller thread at a time)."""

    def __init__(self, targets, engine="", engine_opts="", capacity=0, stripe_size=0,
                 direct=True, iodepth=0, staging_bytes=0, fast_bytes=0, readahead_bytes=0):
        self._lib = _load()
        if isinstance(targets, (str, bytes, os.PathLike)):
            targets = [targets]
        room = _OptsRoom()
        self._lib.llmio_store_opts_init(ctypes.byref(room))
        o = room.o
        o.engine = engine.encode()
        o.engine_opts = engine_opts.encode()
        self._targets = (ctypes.c_char_p * len(targets))(*[os.fsencode(t) for t in targets])
        o.targets = ctypes.cast(self._targets, ctypes.POINTER(ctypes.c_char_p))
        o.ntargets = len(targets)
        o.direct = bool(direct)
        for name, v in (("capacity", capacity), ("stripe_size", stripe_size),
                        ("iodepth", iodepth), ("staging_bytes", staging_bytes),
                        ("fast_bytes", fast_bytes), ("readahead_bytes", readahead_bytes)):
            if v:  # 0 keeps the library's default
                setattr(o, name, int(v))
        self._s = ctypes.c_void_p()
        self._err = _Error()
        self._lock = threading.RLock()
        rc = self._lib.llmio_store_create(ctypes.byref(room), ctypes.byref(self._s),
                                          ctypes.byref(self._err))
        if rc < 0:
            _raise(rc, self._err, "llmio_store_create")
        self._evbuf = (_Event * 64)()
        self.direct = bool(direct)

    def close(self):
        with self._lock:
            if self._s:
                self._lib.llmio_store_destroy(self._s)
                self._s = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _call(self, name, *args):
        with self._lock:
            rc = getattr(self._lib, name)(self._s, *args, ctypes.byref(self._err))
        if rc < 0:
            _raise(rc, self._err, name)
        return rc

    def put(self, ptr, nbytes, borrow=True):
        """Start writing nbytes at address ptr; returns the handle.  With borrow the memory must
        stay valid and unchanged until ``poll`` reports the handle's EV_PUT."""
        h = ctypes.c_uint64()
        self._call("llmio_store_put", ctypes.c_void_p(ptr), nbytes, BORROW if borrow else COPY,
                   ctypes.byref(h))
        return h.value

    def get(self, handle, ptr, nbytes, wait=True):
        self._call("llmio_store_get", handle, ctypes.c_void_p(ptr), nbytes, bool(wait))

    def prefetch(self, handle):
        self._call("llmio_store_prefetch", handle)

    def hint(self, handles=None, reverse=False):
        """The expected order of future gets: a list of handles, or reverse=True (reverse of
        the puts)."""
        if reverse:
            self._call("llmio_store_hint", ORDER_REVERSE, None, 0)
            return
        handles = list(handles or [])
        arr = (ctypes.c_uint64 * max(1, len(handles)))(*handles)
        self._call("llmio_store_hint", ORDER_LIST if handles else ORDER_NONE, arr, len(handles))

    def release(self, handle):
        self._call("llmio_store_release", handle)

    def flush(self):
        self._call("llmio_store_flush")

    def poll(self):
        """Pending events as (handle, type, res) tuples; never blocks."""
        out = []
        with self._lock:
            while True:
                n = self._lib.llmio_store_poll(self._s, self._evbuf, len(self._evbuf))
                if n < 0:
                    _raise(n, None, "llmio_store_poll")
                out.extend((e.handle, e.type, e.res) for e in self._evbuf[:n])
                if n < len(self._evbuf):
                    return out

    def wait_event(self, timeout):
        """Block until an event is pending (the store's eventfd) or timeout seconds pass."""
        with self._lock:
            fd = self._lib.llmio_store_eventfd(self._s)
        if fd >= 0:
            select.select([fd], [], [], timeout)
        else:
            time.sleep(min(timeout, 0.001))

    def stats(self):
        st = _Stats()
        st.stats_size = ctypes.sizeof(_Stats)
        with self._lock:
            rc = self._lib.llmio_store_stats(self._s, ctypes.byref(st))
        if rc < 0:
            _raise(rc, None, "llmio_store_stats")
        return {name: getattr(st, name) for name, _ in _Stats._fields_ if name != "stats_size"}


class _Saved:
    """What autograd keeps instead of an offloaded tensor."""

    __slots__ = ("owner", "handle", "shape", "dtype", "nbytes", "layer", "tensor", "__weakref__")

    def __init__(self, owner, handle, t, layer):
        self.owner, self.handle, self.layer = owner, handle, layer
        self.shape, self.dtype, self.nbytes = t.shape, t.dtype, t.numel() * t.element_size()
        self.tensor = None  # the data once read back (a tensor saved twice is read once)

    def __del__(self):
        # autograd dropped the last reference: the extent is free again.  Only queued here:
        # this may run inside another store call or on another thread.
        self.owner._dead.append(self.handle)


class _Kept:
    """A tensor kept in memory while tracing (so that unpack can time the layer's backward)."""

    __slots__ = ("layer", "tensor")

    def __init__(self, layer, tensor):
        self.layer, self.tensor = layer, tensor


class Offload:
    """The saved-tensor hooks and module hooks for one model (see the module's docstring).

    Counters after a run: ``offloaded_bytes`` / ``offloaded`` (tensors handed to the store),
    ``kept_bytes`` / ``kept`` (saved tensors left in memory), ``dedup`` (saves that reused a
    tensor already offloaded)."""

    POLICIES = ("keep", "all", "window")

    def __init__(self, store, policy="all", min_bytes=64 << 10, model=None, layers=None,
                 keep_last=1, max_inflight_bytes=16 << 20, copy=False, trace=None):
        import torch  # noqa: F401  (fails here, not at import, where torch is absent)

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
        self.offloaded_bytes = self.offloaded = self.kept_bytes = self.kept = self.dedup = 0
        self._inflight = {}  # handle -> tensor, until the store has written it
        self._inflight_bytes = 0
        self._live = {}  # identity -> weakref to _Saved, for dedup within a step
        self._order = []  # handles in put order, this step
        self._hinted = 0  # how many of them the store was told about
        self._dead = []  # handles whose records autograd dropped
        self._layer = -1
        self._hooks = []
        self._params = set()
        self._trace = open(trace, "w") if trace else None
        self._step = 0
        self._tl = {}  # layer -> [bytes, fwd_start, fwd_us, bwd_first_unpack]
        if self._trace:
            self._trace.write("# llmio-offload-trace 1\n# layer bytes fwd_us bwd_us\n")
        self._ctx = None

    # --- hooks ---------------------------------------------------------------------------
    def _offloadable(self, t):
        """Could the tensor go to the store at all (policy ``all``)?"""
        import torch

        if isinstance(t, torch.nn.Parameter) or t.data_ptr() in self._params:
            return False  # parameters stay (and are not the activations to move)
        if t.device.type != "cpu" or t.is_sparse or not t.is_contiguous():
            return False
        return t.numel() * t.element_size() >= self.min_bytes

    def _eligible(self, t):
        if self.policy == "keep" or not self._offloadable(t):
            return False
        if self.policy == "window":
            # outside the blocks (embedding, head) and in the last keep_last blocks: kept, as
            # SSDTrain keeps the last module (backward needs it first)
            return 0 <= self._layer < len(self.layers) - self.keep_last
        return True

    def _service(self, block=False):
        """Collect write completions (freeing borrowed tensors) and queued releases."""
        while self._dead:
            h = self._dead.pop()
            t = self._inflight.pop(h, None)  # released before written: the store waits first
            if t is not None:
                self._inflight_bytes -= t.numel() * t.element_size()
            self.store.release(h)
        while True:
            for h, typ, res in self.store.poll():
                if res < 0:
                    raise StoreError(-res, "llmio store: handle %d failed: %s"
                                     % (h, os.strerror(-res)))
                if typ == EV_PUT:
                    t = self._inflight.pop(h, None)
                    if t is not None:
                        self._inflight_bytes -= t.numel() * t.element_size()
            if not block or self._inflight_bytes <= self.max_inflight_bytes:
                return
            self.store.wait_event(0.05)

    def _pack(self, t):
        if not self._eligible(t):
            self.kept += 1
            self.kept_bytes += t.numel() * t.element_size()
            if self._trace and self._layer in self._tl and self._offloadable(t):
                # the trace holds what policy "all" would move, whatever this run's policy
                self._tl[self._layer][0] += t.numel() * t.element_size()
                return _Kept(self._layer, t)
            return t
        key = (t.data_ptr(), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype,
               t._version)
        # the same memory only while the first tensor lives (its address could be reused after)
        refs = self._live.get(key)
        rec = refs[1]() if refs is not None and refs[0]() is not None else None
        if rec is not None:
            self.dedup += 1
            return rec
        nbytes = t.numel() * t.element_size()
        if self.copy:
            h = self.store.put(t.data_ptr(), nbytes, borrow=False)
        else:
            h = self.store.put(t.data_ptr(), nbytes, borrow=True)
            self._inflight[h] = t  # referenced until on storage: pack never copies
            self._inflight_bytes += nbytes
        rec = _Saved(self, h, t, self._layer)
        self._live[key] = (weakref.ref(t), weakref.ref(rec))
        self._order.append(h)
        self.offloaded += 1
        self.offloaded_bytes += nbytes
        if self._layer in self._tl:
            self._tl[self._layer][0] += nbytes
        self._service(block=not self.copy)
        return rec

    def _unpack(self, obj):
        import torch

        if isinstance(obj, torch.Tensor):
            return obj
        if isinstance(obj, _Kept):
            self._mark_bwd(obj.layer)
            return obj.tensor
        if obj.tensor is None:
            self._hint()  # saves after the model's forward (the loss) count too
            self._mark_bwd(obj.layer)
            self._service()
            out = torch.empty(obj.shape, dtype=obj.dtype)
            self.store.get(obj.handle, out.data_ptr(), obj.nbytes, wait=True)
            obj.tensor = out
        return obj.tensor

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

    def _hint(self):
        # backward reads the handles in the reverse order of the puts: tell the store, which
        # prefetches along it within its read-ahead budget
        if self.store is not None and len(self._order) != self._hinted:
            self.store.hint(list(reversed(self._order)))
            self._hinted = len(self._order)

    def _forward_done(self, mod, inp, out):
        self._hint()

    def end_step(self):
        """Call after backward: writes the trace's lines of this step and releases what is left."""
        if self.store is not None:
            self._service()
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
        self._order, self._hinted = [], 0
        self._live.clear()
        self._step += 1

    def __enter__(self):
        import torch

        if self.model is not None:
            self._params = {p.data_ptr() for p in self.model.parameters()}
            self._hooks.append(self.model.register_forward_hook(self._forward_done))
        for i, m in enumerate(self.layers):
            self._hooks.append(m.register_forward_pre_hook(self._pre(i)))
            self._hooks.append(m.register_forward_hook(self._post(i)))
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)
        for h in self._hooks:
            h.remove()
        self._hooks = []
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
