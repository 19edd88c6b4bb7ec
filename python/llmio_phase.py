# SPDX-License-Identifier: MIT
"""Phase markers for Python programs run under ``llmio trace``.

    import llmio_phase

    with llmio_phase.phase("load"):
        model = torch.load("model.pt")
    llmio_phase.set_phase("train")      # until the next call
    llmio_phase.set_phase("")           # no phase

Every file I/O call made afterwards, in this process and in the processes it forks, execs or
spawns later (DataLoader workers, subprocess), is tagged with the phase in the trace.  Without the tracer every call
here does nothing, so the module can stay in a program for good.  No dependencies beyond the
standard library; the tracer's C function ``llmio_trace_phase`` is found with ctypes in the
preloaded library.
"""

import contextlib
import ctypes
import os
import threading

__all__ = ["phase", "set_phase", "current", "traced"]


def _find():
    try:
        fn = ctypes.CDLL(None).llmio_trace_phase
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_char_p]
    fn.restype = None
    return fn


_fn = _find()
_lock = threading.Lock()
# A program exec'd or spawned by a traced one starts in its parent's phase: the tracer passes
# it in $LLMIO_TRACE_PHASE and has already applied it.
_current = os.environ.get("LLMIO_TRACE_PHASE", "") if _fn is not None else ""


def traced():
    """True when the program runs under ``llmio trace``."""
    return _fn is not None


def current():
    """The phase set last ("" for none)."""
    return _current


def set_phase(name):
    """Make ``name`` the current phase of this process ("" ends it)."""
    global _current
    with _lock:
        _current = name or ""
        if _fn is not None:
            _fn(_current.encode("utf-8"))


@contextlib.contextmanager
def phase(name):
    """Run the ``with`` block in phase ``name``; the previous phase comes back after it."""
    previous = _current
    set_phase(name)
    try:
        yield
    finally:
        set_phase(previous)
