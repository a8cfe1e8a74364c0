"""The two namespaces a derivative rule can run on.

`array_ns(np)` is NumPy (or CuPy) plus the array twins of the ops registered with
`defop(array_twin=True)` (`xp.softmax_backward`, `xp.conv`, `xp.sum_to`, ...): a first-order
backward runs rules on raw arrays and records nothing. `T` exposes every op of the table
under its NumPy-style name, on tensors: a backward that must itself be differentiable runs
the same rule text on `T`, and the dispatcher records it like any other computation.

This module imports nothing of the op table: `T` looks ops up in `registry.OPS` when a rule
asks, and the registry hands the twins over through `register_array_twin`.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend

_twins: dict[str, Callable[..., Any]] = {}
_array_namespaces: dict[object, types.SimpleNamespace] = {}


def register_array_twin(name: str, fn: Callable[..., Any]) -> None:
    """Make `fn(ns, ...)` available as `ns.<name>(...)` on every array namespace, those made
    already and those to come. Called by `defop(array_twin=True)`; the tensor namespace's
    `<name>` is the op itself."""
    _twins[name] = fn
    for ns in _array_namespaces.values():
        setattr(ns, name, _bind(fn, ns))


def _bind(fn, ns):
    return lambda *args, **kwargs: fn(ns, *args, **kwargs)


def array_ns(module) -> types.SimpleNamespace:
    """NumPy/CuPy `module` with tapegrad's helpers added, made once per module."""
    ns = _array_namespaces.get(module)
    if ns is None:  # first use of this backend
        # vars(), not dir()+getattr(): getattr would import NumPy's lazy submodules (f2py...)
        public = {k: v for k, v in vars(module).items() if not k.startswith("_")}
        ns = types.SimpleNamespace(**public)
        ns.module = module
        ns.to_device = lambda g, device, source=None: backend.to_device(g, device)
        for name, fn in _twins.items():
            setattr(ns, name, _bind(fn, ns))
        _array_namespaces[module] = ns
    return ns


class _TensorNamespace:
    """Ops by their NumPy-style names, on tensors (attribute lookups go to the op table)."""

    module = None

    def __getattr__(self, name):
        from .registry import OPS

        try:
            return OPS[name]
        except KeyError:
            raise AttributeError(
                f"derivative rule used xp.{name}, which is not an op in the table; register it "
                "with @defop, with array_twin=True if NumPy lacks it (or use a name both NumPy "
                "and the op table have)"
            ) from None

    @staticmethod
    def zeros_like(t, dtype=None):
        from ..tensor import _wrap

        return _wrap(backend.array_module(t._data).zeros_like(t._data, dtype=dtype))

    @staticmethod
    def ones_like(t, dtype=None):
        from ..tensor import _wrap

        return _wrap(backend.array_module(t._data).ones_like(t._data, dtype=dtype))


T = _TensorNamespace()
array_ns(np)


def sum_to_axes(shape_from: tuple, shape_to: tuple) -> tuple:
    """The axes to sum so that an array broadcast to `shape_from` comes back to `shape_to`."""
    lead = len(shape_from) - len(shape_to)
    return tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape_to) if n == 1 and shape_from[i + lead] != 1
    )


# ------------------------------------------------ helpers of the written forward (jvp) rules
def plus_tangents(a: Any, b: Any) -> Any:
    """a + b where None means "no tangent" (a jvp rule's input without one)."""
    if a is None:
        return b
    return a if b is None else a + b


def linear_jvp(op: Any) -> Callable[..., Any]:
    """The jvp rule of an op linear in its one input: the tangent goes through the op itself
    (on tensors when the tangent must stay differentiable, on arrays otherwise)."""

    def rule(xp, tangents, *, out, **params):
        if xp is T:
            return op(tangents[0], **params)
        return op.forward(xp.module, tangents[0], **params)

    return rule
