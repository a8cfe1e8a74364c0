"""NumPy-style ops: ops a derivative rule can call exactly as it calls NumPy.

`numpy_op` registers an op whose parameters may also come positionally after its inputs
(`xp.swapaxes(g, -1, -2)` runs on arrays and on tensors alike), whose variadic inputs may come
as one sequence (`xp.concatenate([a, b], axis)`), and whose rule may learn the input's shape
as the `in_shape` parameter instead of saving the input. Public functions, which pass every
parameter by keyword, call ops through `_call` and skip that remapping.
"""
from __future__ import annotations

from ..tensor import Tensor, _axis
from .registry import Op, defop


class NumpyStyleOp(Op):
    """An op that can also be called the NumPy way.

    Parameters may come positionally after the inputs (a rule running on tensors calls
    `xp.swapaxes(g, -1, -2)` exactly as it would on arrays); variadic ops accept a sequence
    first (`xp.concatenate([a, b], axis)`); ops whose rule needs the input's shape get it as
    the `in_shape` parameter, so they never have to save the input itself.
    """

    n_inputs = 1  # None: variadic
    param_names: tuple = ()
    wants_in_shape = False

    def __call__(self, *args, **params):
        n = self.n_inputs
        if n is None:
            if args and isinstance(args[0], (list, tuple)):
                params.update(zip(self.param_names, args[1:], strict=False))
                args = tuple(args[0])
        elif len(args) > n:
            params.update(zip(self.param_names, args[n:], strict=False))
            args = args[:n]
        for k, v in params.items():  # an index array saved as a tensor is a constant here
            if isinstance(v, Tensor):
                params[k] = v._data
        if self.wants_in_shape:
            params["in_shape"] = args[0].shape
        return Op.__call__(self, *args, **params)


def numpy_op(params=(), inputs=1, in_shape=False, **kw):
    """`defop` for a NumPy-style op: `params` names the keyword parameters in NumPy's
    positional order, `inputs` how many leading arguments are inputs (None: variadic)."""

    def register(forward):
        op = defop(**kw)(forward)
        op.__class__ = NumpyStyleOp
        op.n_inputs = inputs
        op.param_names = tuple(params)
        op.wants_in_shape = in_shape
        return op

    return register


_call = Op.__call__  # public functions pass every parameter by keyword: skip the remapping


def _norm_axes(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_axis(a, ndim) for a in axis)
    return _axis(axis, ndim)


def _dims_arg(dims):
    """`f(x, 2, 3)` or `f(x, (2, 3))` or `f(x, [2, 3])` -> (2, 3)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    if len(dims) == 1 and isinstance(dims[0], Tensor):
        return tuple(int(d) for d in dims[0].tolist())
    return tuple(dims)


def _pick(dim, axis, name="dim"):
    if axis is not None:
        if dim is not None:
            raise TypeError(f"pass {name}= or axis=, not both")
        return axis
    return dim


def _need_dim(dim, axis, what):
    """dim= or axis= (one of them, required), as PyTorch and NumPy users spell it."""
    dim = _pick(dim, axis)
    if dim is None:
        raise TypeError(f"{what}() missing argument 'dim' (or axis=)")
    return dim
