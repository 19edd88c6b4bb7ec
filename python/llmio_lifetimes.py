# SPDX-License-Identifier: MIT
"""Record the tensor lifetimes of one PyTorch training step for `llmio run --workload migrate`.

    import llmio_lifetimes

    rec = llmio_lifetimes.Recorder(net)
    with rec:                                   # one step: forward and backward
        loss = loss_fn(net(x), y)
        loss.backward()
    rec.write("step.lt")                        # the llmio-lifetimes 1 line format

    llmio run --workload migrate --lifetimes step.lt --budget 6g --simulate

Kernels are the step's time cut at module boundaries, each with its measured duration:

- forward: every module's forward pre-hook and forward hook end one kernel and start the next,
  named ``fwd.NAME`` after the innermost module running then (``fwd`` outside every module:
  the loss, for instance);
- backward: a hook on each module's output gradient (the module's backward starts) and every
  unpack of a tensor saved under another module end one kernel and start the next, named
  ``bwd.NAME`` (``bwd`` before the first); the last ends when the ``with`` block does.

Tensors come from ``saved_tensors_hooks``: every tensor autograd saves is one tensor (saved
twice, the same address, storage offset, shape, strides, dtype and version: one tensor), created by
the kernel that saved it and used by each kernel that saved it again or unpacked it.  A
parameter is a ``weight`` that lives across steps (created ``-``); anything else an
``activation``.  Each parameter's gradient is a ``gradient`` created by the kernel during which
autograd produced it and used by the step's last kernel (it lives until the optimizer).

The recorder keeps every saved tensor in memory, as without hooks; it moves nothing.  Counters
the hooks keep apart from the table it writes: ``saved`` / ``saved_bytes`` (distinct saved
tensors), ``grads`` / ``grad_bytes``.  No dependencies beyond the standard library and torch.
"""

import time

__all__ = ["Recorder"]

_NAME_MAX = 63  # LT_NAME_MAX - 1, src/migrate/lifetime.h: longer names are cut there


def _nbytes(t):
    return t.numel() * t.element_size()


def _clean(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


class _Rec:
    """What autograd keeps for a saved tensor while recording: its index and the tensor."""

    __slots__ = ("idx", "tensor")

    def __init__(self, idx, tensor):
        self.idx, self.tensor = idx, tensor


class Recorder:
    """Module and saved-tensor hooks that record one step (see the module's docstring)."""

    def __init__(self, model):
        import torch  # noqa: F401  (fails here, not at import, where torch is absent)

        self.model = model
        self._names = {m: _clean(n) or "model" for n, m in model.named_modules()}
        self._pnames = {p.data_ptr(): _clean(n) for n, p in model.named_parameters()}
        self.kernels = []  # [name, seconds]
        # [name, bytes, kind, created (None: across steps), set of uses]
        self.tensors = []
        self.saved = self.saved_bytes = self.grads = self.grad_bytes = 0
        self._hooks, self._ctx = [], None

    # --- kernels: the step's time cut at module boundaries ----------------------------------
    def _cut(self, name):
        """End the current kernel now and start one called name."""
        now = time.perf_counter()
        self.kernels[-1][1] = now - self._t0
        self._t0 = now
        self.kernels.append([name, 0.0])

    def _pre(self, mod, inp):
        if not self._bwd:
            self._stack.append(self._names.get(mod, "?"))
            self._cut("fwd." + self._stack[-1])

    def _post(self, mod, inp, out):
        if self._bwd:
            return
        self._stack.pop()
        self._cut("fwd." + self._stack[-1] if self._stack else "fwd")
        import torch

        # the output's gradient arrives when this module's backward starts; a tensor several
        # modules return (the model's output is its head's) belongs to the innermost
        if isinstance(out, torch.Tensor) and out.requires_grad and id(out) not in self._hooked:
            self._hooked[id(out)] = out
            name = self._names.get(mod, "?")
            self._hooks.append(out.register_hook(lambda g, n=name: self._bwd_module(n)))

    def _bwd_module(self, name):
        self._enter_bwd()
        if self._bwd != name:
            self._bwd = name
            self._cut("bwd." + name)

    def _enter_bwd(self):
        if not self._bwd:
            self._bwd = "-"
            self._cut("bwd")

    # --- tensors -----------------------------------------------------------------------------
    def _use(self, idx):
        t = self.tensors[idx]
        k = len(self.kernels) - 1
        if t[3] != k:
            t[4].add(k)

    def _pack(self, t):
        key = (t.data_ptr(), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype, t._version)
        idx = self._live.get(key)
        if idx is not None:
            self._use(idx)
            return _Rec(idx, t)
        idx = len(self.tensors)
        pname = self._pnames.get(t.data_ptr())
        owner = self.kernels[-1][0].split(".", 1)[-1]
        if pname is not None:
            rec = ["w." + pname, _nbytes(t), "weight", None, {len(self.kernels) - 1}]
        else:
            rec = ["a%d.%s" % (idx, owner), _nbytes(t), "activation", len(self.kernels) - 1,
                   set()]
        rec[0] = self._unique(rec[0])
        self.tensors.append(rec)
        self._owner.append(owner)
        self._live[key] = idx
        self._live_t.append(t)  # kept (as autograd would) so that its address is not reused
        self.saved += 1
        self.saved_bytes += _nbytes(t)
        return _Rec(idx, t)

    def _unique(self, name):
        """name, cut to what the reader keeps, and made distinct (a view of a parameter is
        another tensor of the same name)."""
        out, n = name[:_NAME_MAX], 1
        while out in self._tnames:
            n += 1
            sfx = "~%d" % n
            out = name[:_NAME_MAX - len(sfx)] + sfx
        self._tnames.add(out)
        return out

    def _unpack(self, r):
        self._enter_bwd()
        owner = self._owner[r.idx]
        if owner != self._bwd and owner not in ("fwd", "bwd"):
            self._bwd = owner
            self._cut("bwd." + owner)
        self._use(r.idx)
        return r.tensor

    def _grad(self, name, nbytes):
        def hook(g):
            self._enter_bwd()
            self.grads += 1
            self.grad_bytes += nbytes
            self._gradk.append((name, nbytes, len(self.kernels) - 1))

        return hook

    # --- the step ----------------------------------------------------------------------------
    def __enter__(self):
        import torch

        self.kernels, self.tensors, self._owner = [["fwd", 0.0]], [], []
        self.saved = self.saved_bytes = self.grads = self.grad_bytes = 0
        self._stack, self._bwd, self._hooked = [], "", {}
        self._live, self._live_t, self._gradk, self._tnames = {}, [], [], set()
        for m in self.model.modules():
            self._hooks.append(m.register_forward_pre_hook(self._pre))
            self._hooks.append(m.register_forward_hook(self._post))
        for n, p in self.model.named_parameters():
            if p.requires_grad:
                self._hooks.append(p.register_hook(self._grad(_clean(n), _nbytes(p))))
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.kernels[-1][1] = time.perf_counter() - self._t0
        self._ctx.__exit__(*exc)
        for h in self._hooks:
            h.remove()
        self._hooks, self._hooked, self._live_t = [], {}, []
        last = len(self.kernels) - 1
        for name, nbytes, k in self._gradk:
            self.tensors.append([self._unique("g." + name), nbytes, "gradient", k,
                                 {last} if k != last else set()])
        self._gradk = []

    def write(self, path):
        """Write the recorded step as an llmio-lifetimes 1 file (docs/migration.md)."""
        with open(path, "w") as f:
            f.write("llmio-lifetimes 1\n# recorded by python/llmio_lifetimes.py\n")
            f.write("# kernels in order: name, duration in microseconds\n")
            for name, s in self.kernels:
                f.write("kernel %s %.3f\n" % (name[:_NAME_MAX], s * 1e6))
            f.write("# tensor NAME BYTES KIND CREATED USES\n")
            for name, nbytes, kind, created, uses in self.tensors:
                if created is None and not uses:
                    continue  # cannot happen: a weight is seen when a kernel saves it
                f.write("tensor %s %d %s %s %s\n" % (
                    name, nbytes, kind, "-" if created is None else created,
                    ",".join(str(u) for u in sorted(uses)) or "-"))
