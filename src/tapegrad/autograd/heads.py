"""The one validator of head gradients: what backward starts from.

Every entry point hands its roots and their head gradients here before anything runs:
`Tensor.backward(gradient=/out_grad=)`, `autograd.backward(grad_tensors=)`,
`autograd.grad(grad_outputs=/head_grads=)` and `GradManager.backward(y, dy)`. Each kind of
mistake raises one exception type with one message, whichever of them was called:

    kind of mistake                               exception
    a different number of gradients and tensors   RuntimeError
    a root that is not a Tensor                   TypeError
    a root that no tape tracks                    RuntimeError
    no gradient for a non-scalar root             RuntimeError
    a gradient of another shape                   RuntimeError
    a gradient that is not floating point         TypeError

    >>> y = tg.ones(3, requires_grad=True) * 2
    >>> try:
    ...     y.backward(tg.ones(2))
    ... except RuntimeError as e:
    ...     print(str(e).split(";")[0])
    Mismatch in shape: gradient 0 has shape (2,) but tensor 0 has shape (3,)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..engine.state import NOT_GRAD, RECORD
from ..tensor import Tensor, _wrap

__all__ = ["head_gradients"]


def head_gradients(
    roots: Sequence[Any],
    grads: Sequence[Any] | None,
    *,
    create_graph: bool = False,
    ones_for_any_shape: bool = False,
    require_graph: bool = True,
) -> list[Any]:
    """Validated head gradients, one per root, all checked before any is returned.

    Args:
        roots: the tensors backward starts from.
        grads: one gradient per root (a Tensor, an array, a number, or None), or None for
            all None. None means ones: allowed for one-element roots, for roots recorded
            by `autograd.record()` (MXNet), and for every root with `ones_for_any_shape`
            (MegEngine's `GradManager.backward(y)`).
        create_graph: return Tensors (a head Tensor is kept, so gradients of gradients may
            flow into it); else backend arrays.
        require_graph: a root that no tape tracks is an error (False: the caller skips it).
    """
    if grads is None:
        grads = [None] * len(roots)
    if len(grads) != len(roots):
        raise RuntimeError(
            f"got {len(roots)} tensors but {len(grads)} gradients; pass one gradient per "
            "tensor (None for ones)"
        )
    return [
        _head(i, t, g, create_graph, ones_for_any_shape, require_graph)
        for i, (t, g) in enumerate(zip(roots, grads))
    ]


def _head(
    i: int, t: Any, g: Any, create_graph: bool, ones_for_any_shape: bool, require_graph: bool
) -> Any:
    if not isinstance(t, Tensor):
        raise TypeError(f"backward: tensor {i} is a {type(t).__name__}, not a Tensor")
    if require_graph and not t._tapes & ~NOT_GRAD:  # a dual or traced tensor alone: no graph
        raise RuntimeError(
            f"tensor {i} is not in a computational graph: it does not require grad and has "
            "no grad_fn. Set requires_grad=True on an input before computing it (PyTorch "
            "style), compute it inside autograd.record() after x.attach_grad() (MXNet "
            "style), or attach an input to a GradManager (MegEngine style)."
        )
    if g is None:
        if not ones_for_any_shape and t._data.size != 1 and not t._tapes & RECORD:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs; tensor {i} has "
                f"shape {t.shape}. Pass a gradient (e.g. tg.ones_like(y)), or reduce it "
                "first (y.sum())."
            )
        ones = np.ones_like(t._data)
        return _wrap(ones) if create_graph else ones
    g_t = g if isinstance(g, Tensor) else None
    arr = g._data if g_t is not None else np.asarray(g)
    if arr.shape != t.shape:
        if arr.size != 1 or t._data.size != 1:
            raise RuntimeError(
                f"Mismatch in shape: gradient {i} has shape {arr.shape} but tensor {i} has "
                f"shape {t.shape}; each gradient must have its tensor's shape"
            )
        arr = arr.reshape(t.shape)
    if arr.dtype != t.dtype:
        if not dtypes.is_floating(arr.dtype):
            raise TypeError(
                f"gradient {i} has dtype {arr.dtype} but tensor {i} is {t.dtype}; pass a "
                "floating point gradient"
            )
        arr = arr.astype(t.dtype)
    if not create_graph:
        return arr
    if g_t is not None and arr is g_t._data:
        return g_t  # kept in the graph: gradients of gradients may flow into it
    return _wrap(arr)
