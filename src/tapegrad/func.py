"""tg.func: function transforms in the style of torch.func / JAX.

`grad(f)` is a new function returning the gradient of `f`'s scalar output with respect to
the argument(s) `argnums`; `value_and_grad(f)` returns `(value, gradient)`. The arguments
need not require grad: the transform differentiates fresh copies, and never touches any
`.grad`. Transforms nest (`grad(grad(f))`) for higher derivatives.

    >>> df = tg.func.grad(lambda x: (x ** 3).sum())
    >>> df(tg.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    >>> tg.func.grad(tg.func.grad(lambda x: x ** 3))(tg.tensor(2.0))
    tensor(12.)
"""
from __future__ import annotations

import functools
import threading

import numpy as np

from .autograd.engine_api import grad as _autograd_grad
from .autograd.modes import enable_grad
from .creation import tensor as _tensor
from .engine.state import state
from .tensor import Tensor, _wrap

__all__ = ["grad", "value_and_grad"]

_nesting = threading.local()  # how many transforms are running in this thread


def grad(func, argnums=0, has_aux=False):
    """The gradient of `func` (a scalar-valued function) as a function.

    Args:
        func: `func(*args, **kwargs)` returning a one-element tensor (or `(value, aux)` with
            `has_aux=True`).
        argnums: which positional argument(s) to differentiate: an int or a tuple of ints;
            a tuple gives a tuple of gradients.
        has_aux: `func` returns `(value, aux)`; the transform returns `(grad, aux)`.

    Returns:
        A function with `func`'s signature returning the gradient(s), shaped like the
        arguments.
    """
    vg = value_and_grad(func, argnums=argnums, has_aux=has_aux)

    @functools.wraps(func)
    def grad_fn(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return grad_fn


def value_and_grad(func, argnums=0, has_aux=False):
    """Like `grad`, but the new function returns `(value, gradient)`
    (`((value, aux), gradient)` with `has_aux=True`).

    >>> tg.func.value_and_grad(lambda x: x ** 2)(tg.tensor(3.0))
    (tensor(9.), tensor(6.))
    """
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise ValueError("grad: argnums must name at least one argument")
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f"grad: argnums must be ints, got {n!r}")

    @functools.wraps(func)
    def vg_fn(*args, **kwargs):
        args = list(args)
        for n in nums:
            if not -len(args) <= n < len(args):
                raise ValueError(
                    f"grad: argnums={n} but the function was called with {len(args)} "
                    "positional arguments"
                )
        # inside another transform the gradient may depend on its variables through closures:
        # keep it differentiable for the outer one
        depth = _nesting.depth = getattr(_nesting, "depth", 0) + 1
        try:
            # the function records whatever the caller's mode; an outer transform (or tape)
            # tracking an argument means our gradient must stay differentiable for it
            with enable_grad():
                create_graph = depth > 1
                wrt = []
                for n in nums:
                    x, nested = _fresh(args[n], n)
                    create_graph |= nested
                    args[n] = x
                    wrt.append(x)
                out = func(*args, **kwargs)
                value, aux = _split(out, has_aux)
                if not isinstance(value, Tensor):
                    raise TypeError(
                        f"grad: the function must return a Tensor, got {type(value).__name__}"
                    )
                if value._data.size != 1:
                    raise RuntimeError(
                        f"grad: the function must return a one-element tensor, got shape "
                        f"{tuple(value.shape)}; reduce it (e.g. .sum()) or use "
                        "tg.autograd.functional.vjp"
                    )
                if value._tapes:
                    gs = _autograd_grad(value, wrt, create_graph=create_graph, allow_unused=True)
                else:
                    gs = (None,) * len(wrt)
        finally:
            _nesting.depth -= 1
        gs = tuple(_wrap(np.zeros_like(x._data)) if g is None else g for g, x in
                   zip(gs, wrt, strict=True))
        if not create_graph:
            value = value.detach()
        g = gs[0] if single else gs
        return ((value, aux) if has_aux else value), g

    return vg_fn


def _fresh(x, n):
    """A tensor to differentiate against, and whether an outer transform tracks `x`."""
    if isinstance(x, Tensor):
        if x._tapes & state.active:
            # an identity node of our own: gradients flow to it (and, recorded, on to x)
            return x + 0.0, True
        t = x.detach()
    else:
        t = _tensor(x)
    if t._data.dtype.kind not in "fc":
        raise TypeError(
            f"grad: argument {n} has dtype {t.dtype}; only floating point arguments can be "
            "differentiated (pass floats, e.g. tg.tensor(2.0))"
        )
    t.requires_grad_(True)
    return t, False


def _split(out, has_aux):
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError("grad(has_aux=True): the function must return a pair (value, aux)")
    return out[0], out[1]
