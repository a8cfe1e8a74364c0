"""`out=` for the torch functions that take it: `torch.matmul(a, b, out=c)` writes into `c`.

As in PyTorch: the result is written into `out`'s storage (its version counter bumps), an
`out` of the wrong shape is resized (with PyTorch's warning when it held elements), a result
dtype that can't be cast to `out`'s dtype is an error, and `out=` refuses to run while
autograd would have to record (an input or `out` requiring grad, with grad enabled).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from ...autograd.modes import is_grad_enabled, no_grad
from ...engine.versions import bump_version
from ...tensor import Tensor, write_data

__all__ = ["CREATION_OUT", "OUT_FUNCTIONS", "with_creation_out", "with_out"]

# "facade name": "tapegrad:core name" (out= is added to each)
_SAME_NAME = (
    "add sub mul div pow matmul mm bmm mv dot cat concat stack exp log sqrt abs neg sin cos"
    " tanh sigmoid clamp maximum minimum sum mean prod cumsum argmax argmin where"
    " floor ceil round sign reciprocal rsqrt square remainder fmod"
)
OUT_FUNCTIONS = {name: f"tapegrad:{name}" for name in _SAME_NAME.split()}
OUT_FUNCTIONS.update(
    {
        "multiply": "tapegrad:mul",
        "divide": "tapegrad:div",
        "subtract": "tapegrad:sub",
        "true_divide": "tapegrad:div",
        "concatenate": "tapegrad:cat",
        "clip": "tapegrad:clamp",
        "multinomial": "tapegrad:multinomial",
    }
)


# the factories: out= gives the result's dtype and device, as in PyTorch
CREATION_OUT = {
    name: f"tapegrad:{name}"
    for name in [
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "linspace",
        "eye",
        "rand",
        "randn",
        "randint",
    ]
}


# the factories whose sizes PyTorch also takes as `size=` (full's and randint's core
# signatures already name it so)
_SIZE_KEYWORD = frozenset({"zeros", "ones", "empty", "rand", "randn"})


def _tracked(values) -> bool:
    for v in values:
        if isinstance(v, Tensor) and v.requires_grad:
            return True
        if isinstance(v, (list, tuple)) and _tracked(v):
            return True
    return False


def write_out(name: str, result: Tensor, out: Tensor) -> Tensor:
    """Write `result` into `out` as PyTorch's out= does; returns `out`."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be a Tensor, not {type(out).__name__}")
    data = result.detach()
    if not np.can_cast(data.dtype, out.dtype, casting="same_kind"):
        raise RuntimeError(
            f"{name}(): result type {data.dtype} can't be cast to the desired "
            f"output type {out.dtype}"
        )
    if out.shape != data.shape:
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(data.shape)}. This behavior is deprecated; pass an out of the right "
                "shape, or an empty one (torch.empty(0)).",
                UserWarning,
                stacklevel=3,
            )
        out.data = data.to(dtype=out.dtype).clone()  # new storage, as resize_
        bump_version(out)
    else:
        write_data(out, data.to(dtype=out.dtype))  # bumps the version
    return out


def with_out(name: str, fn):
    """`fn` with an `out=` keyword (the other arguments pass through)."""

    @functools.wraps(fn)
    def function(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if is_grad_enabled() and (
            _tracked(args)
            or _tracked(kwargs.values())
            or (isinstance(out, Tensor) and out.requires_grad)
        ):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad; call it without "
                "out= (y = torch.f(x)) or under torch.no_grad()"
            )
        with no_grad():
            result = fn(*args, **kwargs)
        return write_out(name, result, out)

    return function


def with_creation_out(name: str, fn):
    """The factory `fn` with PyTorch's `out=` (and `size=` for the sizes): the values are
    made in `out`'s dtype and on its device (a `dtype=` that differs is an error) and
    written into `out`, which is resized silently when its shape differs, as PyTorch's
    factories do."""

    @functools.wraps(fn)
    def function(*args, out=None, **kwargs):
        if name in _SIZE_KEYWORD and "size" in kwargs:
            # torch.zeros(size=(2, 3)): PyTorch's keyword for the sizes given positionally
            if args:
                raise TypeError(f"{name}(): got the sizes both positionally and as size=; pass one")
            args = (kwargs.pop("size"),)
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be a Tensor, not {type(out).__name__}")
        dtype = kwargs.pop("dtype", None)
        if dtype is not None and np.dtype(dtype) != out.dtype:
            raise RuntimeError(
                f"{name}(): dtype {np.dtype(dtype)} does not match the dtype of the out "
                f"parameter ({out.dtype}); leave dtype= out or make out of that dtype"
            )
        if is_grad_enabled() and out.requires_grad:
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but out requires grad; create out under torch.no_grad() "
                "or without requires_grad"
            )
        requires_grad = kwargs.pop("requires_grad", False)
        kwargs.setdefault("device", out.device)
        with no_grad():
            result = fn(*args, dtype=out.dtype, **kwargs)
            if out.shape != result.shape:
                out.data = result  # new storage, as resize_
                bump_version(out)
            else:
                write_data(out, result)  # bumps the version
        if requires_grad:
            out.requires_grad_(True)
        return out

    return function
