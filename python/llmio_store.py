# SPDX-License-Identifier: MIT
"""ctypes binding of llmio's tensor store (include/llmio/store.h) for Python programs.

    import llmio_store

    with llmio_store.Store(["/mnt/nvme/offload"], staging_bytes=16 << 20) as store:
        h = store.put(address, nbytes)          # borrowed: keep the memory until EV_PUT
        store.get(h, other_address, nbytes)     # wait=True: returns once the bytes landed
        print(store.stats())

``Store`` wraps one ``struct llmio_store``: put / get / wait / prefetch / hint / release /
poll / flush / stats, each raising ``StoreError`` on failure.  The PyTorch saved-tensor hooks
over it are ``llmio_offload`` (which imports this module and re-exports its names).

The structs and constants below mirror include/llmio/store.h and include/llmio/common.h by
hand; ``C_LAYOUT`` names the C struct each one mirrors, and tests/cli_python_layout.sh compiles
a C program from the header and fails when a size, a member's name, order or offset, or a
constant differs on one side.

The library: ``$LLMIO_LIB`` when set, else ``libllmio.so`` in the build folders next to this
file (build/, build-*/), else the installed one (the dynamic loader's search path).

Errors: every failed store call raises ``StoreError`` (an ``OSError``: ``errno`` and the
library's one-line message).

Cleanup: ``Store.close()`` (or ``with``) removes the store's file; so do interpreter exit (a
``KeyboardInterrupt`` from Ctrl-C included) and SIGTERM, for which the first ``Store`` installs
a handler when the program has none (it closes every store, then dies of SIGTERM as before).  A
process killed outright (SIGKILL) leaves its file, preallocated to ``capacity``: the next store
in that directory removes it and says so with a ``StoreWarning`` (``Store.reclaimed_files``,
``reclaimed_bytes``).

No dependencies beyond the standard library.
"""

import atexit
import ctypes
import ctypes.util
import glob
import os
import select
import signal
import threading
import time
import warnings
import weakref

__all__ = ["Store", "find_library", "StoreError", "StoreWarning"]

_ERROR_MSG_MAX = 1024  # LLMIO_ERROR_MSG_MAX, include/llmio/common.h

EV_PUT, EV_GOT, EV_ERROR = 1, 2, 3
ORDER_NONE, ORDER_REVERSE, ORDER_LIST = 0, 1, 2
COPY, BORROW = 0, 1


class StoreError(OSError):
    """A store call failed: errno and the library's one-line message."""


class StoreWarning(UserWarning):
    """Something the store did that the program should hear of (stale files it removed)."""


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
    _not_a_mirror = True  # (no C struct: the options with room after them)
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
        ("staged_bytes", ctypes.c_uint64),
        ("direct_bytes", ctypes.c_uint64),
        ("reclaimed_files", ctypes.c_uint64),
        ("reclaimed_bytes", ctypes.c_uint64),
    ]


# What tests/cli_python_layout.sh compares with the headers: the C struct each ctypes struct
# mirrors (member for member: names, order, offsets, size) and the C name of each constant.
C_LAYOUT = {
    "llmio_error": _Error,
    "llmio_store_opts": _Opts,
    "llmio_store_event": _Event,
    "llmio_store_stats": _Stats,
}
C_CONSTANTS = {
    "LLMIO_ERROR_MSG_MAX": _ERROR_MSG_MAX,
    "LLMIO_STORE_EV_PUT": EV_PUT,
    "LLMIO_STORE_EV_GOT": EV_GOT,
    "LLMIO_STORE_EV_ERROR": EV_ERROR,
    "LLMIO_STORE_ORDER_NONE": ORDER_NONE,
    "LLMIO_STORE_ORDER_REVERSE": ORDER_REVERSE,
    "LLMIO_STORE_ORDER_LIST": ORDER_LIST,
    "LLMIO_STORE_COPY": COPY,
    "LLMIO_STORE_BORROW": BORROW,
}


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
        if not hasattr(lib, "llmio_store_create") or not hasattr(lib, "llmio_store_wait"):
            raise OSError(
                "%s (from %s) has no tensor store with llmio_store_wait: it predates this "
                "binding; rebuild it or point LLMIO_LIB at a newer libllmio.so" % (path, where)
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
            "llmio_store_wait": (ctypes.c_int, [S, u64, E]),
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


# Every open store, closed (its file removed) at interpreter exit and on SIGTERM.
_open_stores = weakref.WeakSet()
_term_installed = False


def _close_all():
    for st in list(_open_stores):
        st.close()


def _on_term(signum, frame):
    # the program had no SIGTERM handler: remove the stores' files, then end as SIGTERM would
    _close_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _watch(store):
    global _term_installed
    _open_stores.add(store)
    if _term_installed or threading.current_thread() is not threading.main_thread():
        return
    _term_installed = True
    atexit.register(_close_all)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_term)


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
        _watch(self)
        self._evbuf = (_Event * 64)()
        self.direct = bool(direct)
        # the library's default: half the staging pool (docs/store.md)
        self.readahead_bytes = int(readahead_bytes or (staging_bytes or 64 << 20) // 2)
        # The per-tensor calls run on the training's compute thread: the functions, the error
        # and handle out-arguments are looked up and wrapped once here, not per call.
        self._eref = ctypes.byref(self._err)
        self._h = ctypes.c_uint64()
        self._href = ctypes.byref(self._h)
        self._put_fn, self._get_fn = self._lib.llmio_store_put, self._lib.llmio_store_get
        self._wait_fn, self._poll_fn = self._lib.llmio_store_wait, self._lib.llmio_store_poll
        self._release_fn = self._lib.llmio_store_release
        st = self.stats()
        self.reclaimed_files, self.reclaimed_bytes = st["reclaimed_files"], st["reclaimed_bytes"]
        if self.reclaimed_files:
            warnings.warn(
                "llmio store: removed %d stale store file(s) (%d bytes) from llmio's directory "
                "of %s, left by processes that were killed" % (
                    self.reclaimed_files, self.reclaimed_bytes,
                    ", ".join(os.fsdecode(t) for t in targets)), StoreWarning, stacklevel=2)

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
        stay valid and unchanged until ``poll`` reports the handle's EV_PUT (an address aligned
        to 4096 is then written from that memory itself, with no staging copy)."""
        with self._lock:
            rc = self._put_fn(self._s, ptr, nbytes, BORROW if borrow else COPY, self._href,
                              self._eref)
            if rc < 0:
                _raise(rc, self._err, "llmio_store_put")
            return self._h.value

    def get(self, handle, ptr, nbytes, wait=True):
        """Read the tensor into nbytes at ptr (4096-aligned: no staging copy).  wait=False only
        starts it: ``wait(handle)`` then returns once it landed."""
        with self._lock:
            rc = self._get_fn(self._s, handle, ptr, nbytes, wait, self._eref)
            if rc < 0:
                _raise(rc, self._err, "llmio_store_get")

    def wait(self, handle):
        """Wait for the handle's gets started with wait=False; raises the first one's error."""
        with self._lock:
            rc = self._wait_fn(self._s, handle, self._eref)
            if rc < 0:
                _raise(rc, self._err, "llmio_store_wait")

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
        with self._lock:
            rc = self._release_fn(self._s, handle, self._eref)
            if rc < 0:
                _raise(rc, self._err, "llmio_store_release")

    def flush(self):
        self._call("llmio_store_flush")

    def poll(self):
        """Pending events as (handle, type, res) tuples; never blocks."""
        out = []
        with self._lock:
            while True:
                n = self._poll_fn(self._s, self._evbuf, 64)
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
