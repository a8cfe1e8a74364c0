"""`mx.cpu()`, `mx.gpu()`, `mx.Context`: MXNet's device objects, mapped to tapegrad devices.

A Context stands for tapegrad's "cpu" (NumPy) or "cuda" (CuPy) device; tapegrad has one
device of each kind, so the device id changes nothing in how an array is stored. An array
made with an explicit `ctx=` (or moved with `as_in_context`) remembers the id for `.ctx`
and for a hybridized HybridBlock's one-context rule; an op's result reports id 0.

    >>> mx.nd.zeros((2,), ctx=mx.cpu())
    <BLANKLINE>
    [0. 0.]
    <NDArray 2 @cpu(0)>
"""

from __future__ import annotations

import threading

from ... import backend

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus"]

_local = threading.local()


class _DefaultContext:
    """`Context.default_ctx` (MXNet 1.x's older name of `current_context()`), read on the
    class itself."""

    def __get__(self, obj, owner=None) -> Context:
        return current_context()


class Context:
    """An MXNet device: `Context("cpu", 0)`, `Context("gpu", 0)`; also a `with` scope that
    makes it the default device of array creation in this thread."""

    default_ctx = _DefaultContext()

    def __init__(self, device_type="cpu", device_id: int = 0) -> None:
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        name = str(device_type).lower()
        if name in ("cpu_pinned", "cpu_shared"):
            name = "cpu"
        if name not in ("cpu", "gpu"):
            raise ValueError(f"unknown device type {device_type!r}; use 'cpu' or 'gpu'")
        self.device_type: str = name
        self.device_id = int(device_id)

    @property
    def type(self) -> str:
        """The tapegrad device name family ("cpu" or "gpu" -> "cuda")."""
        return self.device_type

    @property
    def device(self) -> str:
        return backend.normalize_device(self.device_type)

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Context)
            and other.device_type == self.device_type
            and other.device_id == self.device_id
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    def __enter__(self):
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _local.stack.pop()

    def empty_cache(self) -> None:
        """Accepted for compatibility; tapegrad keeps no device memory pool of its own."""


def cpu(device_id: int = 0) -> Context:
    """The CPU (tapegrad's NumPy backend)."""
    return Context("cpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """Pinned CPU memory does not exist in tapegrad: the plain CPU."""
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """The GPU (tapegrad's CuPy backend; arrays made there need CuPy and a GPU)."""
    return Context("gpu", device_id)


def current_context() -> Context:
    """The innermost `with ctx:` of this thread, else the CPU."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else Context("cpu", 0)


def num_gpus() -> int:
    """1 when CuPy sees a GPU, else 0."""
    try:
        backend.cupy()
    except RuntimeError:
        return 0
    return 1


def device_of(ctx) -> str:
    """tapegrad's device name for an MXNet `ctx` argument (None: the current context)."""
    if ctx is None:
        ctx = current_context()
    if isinstance(ctx, (list, tuple)):
        if len(ctx) != 1:
            raise ValueError(
                f"tapegrad runs on one device; got {len(ctx)} contexts {ctx}. Pass a single "
                "context (data parallel training uses tapegrad.distributed instead)"
            )
        ctx = ctx[0]
    return backend.normalize_device(ctx)


def context_of(device: str, device_id: int = 0) -> Context:
    return Context("cpu" if device == "cpu" else "gpu", device_id)


def placed(t, ctx):
    """`t`, remembering the device id of `ctx` when it is a Context with an id other than 0
    (a facade array keeps it in its `_ctx_id` slot; see the module docstring)."""
    if isinstance(ctx, Context) and ctx.device_id and hasattr(type(t), "_ctx_id"):
        t._ctx_id = ctx.device_id
    return t
