"""`mge.functional` (import as F): MegEngine's functions on tapegrad ops.

Names and signatures are MegEngine's (`axis=`, `keepdims=`, `F.matmul(a, b,
transpose_a=...)`, `F.transpose(x, pattern)`, `F.concat(xs, axis)`); where MegEngine and
PyTorch differ, MegEngine's meaning is kept (`F.max` returns values, `F.var`/`F.std` are
population statistics, `F.repeat` repeats elements, `F.split` takes a count or split
points, `F.softmax` has MegEngine's default axis). `F.nn` holds the layers' functions and
the losses.

    >>> import tapegrad.compat.megengine.functional as F
    >>> a, b = mge.tensor([[1.0, 2.0]]), mge.tensor([[3.0], [4.0]])
    >>> F.sum(F.matmul(a, b), axis=1, keepdims=True)
    Tensor([[11.]], device=cpu)
"""

from __future__ import annotations

from ... import _numpy_style as _np_style
from ..._facade import core_aliases, facade_dir, facade_getattr
from .._tensor import Tensor
from .._tensor import tensor as _tensor
from . import elemwise, nn, vision  # noqa: F401
from . import nn as loss  # noqa: F401  (MegEngine 1.x also has F.loss)
from .extra import (  # noqa: F401
    argsort,
    expand_dims,
    indexing_one_hot,
    pixel_shuffle,
    sort,
    topk,
    topk_accuracy,
)
from .nn import dropout, one_hot  # noqa: F401


def _tg():
    import tapegrad

    return tapegrad


def matmul(
    inp1, inp2, transpose_a=False, transpose_b=False, compute_mode="default", format="default"
):  # noqa: A002
    """Matrix product (batched over leading axes), optionally transposing either operand."""
    return _np_style.batch_matmul(inp1, inp2, transpose_a, transpose_b)


def transpose(inp, pattern):
    """Permute the axes: `F.transpose(x, (1, 0, 2))`."""
    return _tg().permute(inp, tuple(pattern))


def reshape(inp, target_shape):
    return _tg().reshape(inp, tuple(target_shape))


def flatten(inp, start_axis=0, end_axis=-1):
    return _tg().flatten(inp, start_axis, end_axis)


def concat(inps, axis=0, device=None):
    return _tg().cat(list(inps), dim=axis)


def stack(inps, axis=0, device=None):
    return _tg().stack(list(inps), dim=axis)


def split(inp, nsplits_or_sections, axis=0):
    """An int n: n parts as even as can be (the first `size % n` one longer: 20 into 3 is
    7, 7, 6, as MegEngine); a list: the split points, which must not decrease."""
    size = inp.shape[axis]
    if isinstance(nsplits_or_sections, int) or (
        hasattr(nsplits_or_sections, "__index__") and not hasattr(nsplits_or_sections, "__len__")
    ):
        n = int(nsplits_or_sections)
        if n <= 0:
            raise ValueError(f"split: the number of sections must be larger than 0, got {n}")
        if n > size:
            raise ValueError(
                f"split: the size {size} at axis {axis} cannot be split into {n} sections"
            )
        sizes = [size // n + (1 if i < size % n else 0) for i in range(n)]
        return list(_tg().split(inp, sizes, dim=axis))
    points = [int(p) for p in nsplits_or_sections]
    bounds = [0, *points, size]
    if any(a > b for a, b in zip(bounds[:-1], bounds[1:])):
        raise ValueError(f"Invalid nsplits_or_secions: {list(nsplits_or_sections)!r}")
    return _np_style.split(inp, points, axis)


def squeeze(inp, axis=None):
    tg = _tg()
    if axis is None:
        return tg.squeeze(inp)
    for ax in sorted(((axis,) if isinstance(axis, int) else tuple(axis)), reverse=True):
        inp = tg.squeeze(inp, ax)
    return inp


def repeat(inp, repeats, axis=None):
    """Each element `repeats` times along `axis` (NumPy's repeat)."""
    return _np_style.repeat_elements(inp, repeats, axis)


def clip(inp, lower=None, upper=None):
    return _tg().clamp(inp, lower, upper)


def max(inp, axis=None, keepdims=False):  # noqa: A001
    """The maximum (values only) over `axis`, every axis when None."""
    return _np_style.amax(inp, axis, keepdims=keepdims)


def min(inp, axis=None, keepdims=False):  # noqa: A001
    return _np_style.amin(inp, axis, keepdims=keepdims)


def var(inp, axis=None, keepdims=False):
    """Population variance (divides by N, as MegEngine)."""
    return _np_style.var(inp, axis, ddof=0, keepdims=keepdims)


def std(inp, axis=None, keepdims=False):
    """Population standard deviation (divides by N, as MegEngine)."""
    return _np_style.std(inp, axis, ddof=0, keepdims=keepdims)


def norm(inp, ord=None, axis=None, keepdims=False):  # noqa: A002
    """The vector p-norm (2 by default) over `axis`, or of the flattened tensor."""
    return _tg().norm(inp, p=2 if ord is None else ord, dim=axis, keepdim=keepdims)


def normalize(inp, ord=None, axis=None, eps=1e-12):
    return inp / clip(norm(inp, ord, axis, keepdims=True), lower=eps)


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
    """The cross product of 3-vectors along `axisa` of `a` and `axisb` of `b` (the other axes
    broadcast), placed along `axisc` of the result; `axis` sets all three (NumPy's `cross`, as
    MegEngine's). A 1-D `a` or `b` of 2 elements gets a third, 0 (MegEngine pads those only).
    Differentiable.

    >>> import tapegrad.compat.megengine.functional as F
    >>> F.cross(mge.tensor([1.0, 2.0, 3.0]), mge.tensor([4.0, 5.0, 6.0])).numpy().tolist()
    [-3.0, 6.0, -3.0]
    """
    tg = _tg()
    if axis is not None:
        axisa = axisb = axisc = axis
    vectors = []
    for name, x, ax in (("a", a, axisa), ("b", b, axisb)):
        if not isinstance(x, tg.Tensor):
            x = _tensor(x)
        if x.ndim == 1 and x.shape[0] == 2:
            x = tg.cat([x, tg.zeros(1, dtype=x.dtype)])
        if x.ndim == 0 or not -x.ndim <= ax < x.ndim:
            raise ValueError(
                f"F.cross: axis{name}={ax} is out of range for {name} of shape "
                f"{tuple(x.shape)}; pass an axis in [-{x.ndim}, {x.ndim})"
            )
        if x.shape[ax] != 3:
            raise ValueError(
                f"F.cross: {name} has {x.shape[ax]} components along axis{name}={ax} (shape "
                f"{tuple(x.shape)}); the vectors need 3 (only a 1-D 2-vector is padded)"
            )
        vectors.append(tg.movedim(x, ax, -1))
    try:
        c = tg.cross(vectors[0], vectors[1], dim=-1)
    except RuntimeError as e:  # the other axes do not broadcast
        raise ValueError(
            f"F.cross: the shapes {tuple(vectors[0].shape[:-1])} and "
            f"{tuple(vectors[1].shape[:-1])} (without the vector axes) do not broadcast"
        ) from e
    if not -c.ndim <= axisc < c.ndim:
        raise ValueError(
            f"F.cross: axisc={axisc} is out of range for the result of {c.ndim} dimensions"
        )
    return tg.movedim(c, -1, axisc)


def softmax(inp, axis=None):
    """Softmax over `axis` (default: 0 for 0-, 1- and 3-D inputs, else 1, as MegEngine)."""
    if axis is None:
        axis = 0 if inp.ndim in (0, 1, 3) else 1
    return _tg().nn.functional.softmax(inp, dim=axis)


def logsoftmax(inp, axis):
    return _tg().nn.functional.log_softmax(inp, dim=axis)


def copy(inp, device=None):
    out = _tg().clone(inp)
    return out if device is None else out.to(device)


def zeros(shape, dtype="float32", device=None):
    return _tensor(_tg().zeros(_shape(shape), dtype=dtype), device=device)


def ones(shape, dtype="float32", device=None):
    return _tensor(_tg().ones(_shape(shape), dtype=dtype), device=device)


def broadcast_to(inp, shape):
    """`inp` broadcast to `shape` (MegEngine's argument names)."""
    return _tg().broadcast_to(inp, _shape(shape))


def tile(inp, reps):
    """`inp` repeated `reps` times along each axis (NumPy's tile)."""
    return _tg().tile(inp, tuple(reps) if not isinstance(reps, int) else (reps,))


def roll(inp, shift, axis=None):
    """Elements shifted by `shift` along `axis` (the flattened tensor when None), wrapping
    around; `shift` and `axis` may be tuples of the same length."""
    return _tg().roll(inp, shift, axis)


def swapaxes(inp, axis1, axis2):
    """`inp` with axes `axis1` and `axis2` interchanged."""
    return _tg().swapaxes(inp, axis1, axis2)


def diag(inp, k=0):
    """A 1-D `inp`: the square matrix with it on diagonal `k`; a 2-D one: its diagonal `k`."""
    return _tg().diag(inp, k)


def eye(N, M=None, *, dtype="float32", device=None):  # noqa: N803  (MegEngine's names)
    """The N x M (N x N) matrix with ones on its diagonal; `N` may be the shape (N, M)."""
    if not isinstance(N, int) and hasattr(N, "__len__"):
        N, M = _shape(N)  # noqa: N806
    return _tensor(_tg().eye(int(N), None if M is None else int(M), dtype=dtype), device=device)


def full(shape, value, dtype=None, device=None):
    """`shape` filled with `value`; the dtype by default is `mge.tensor(value)`'s, as in
    MegEngine (bool for True, int32 for 4, float32 for 5.0)."""
    if dtype is None:
        dtype = _tensor(value).dtype
    return _tensor(_tg().full(_shape(shape), value, dtype=dtype), device=device)


def arange(start=0, stop=None, step=1, dtype="float32", device=None):
    """Values from `start` to `stop` by `step` (float32 by default, as MegEngine)."""
    if stop is None:
        start, stop = 0, start
    return _tensor(_tg().arange(start, stop, step, dtype=dtype), device=device)


def linspace(start, stop, num, dtype="float32", device=None):
    import numpy as np

    return _tensor(np.linspace(start, stop, int(num)), dtype=dtype, device=device)


def _shape(shape):
    """A shape from an int, a sequence, or a tensor / array of them (0-d: one dimension)."""
    if hasattr(shape, "shape") and hasattr(shape, "tolist"):  # a tensor or a NumPy array
        shape = shape.tolist()
    return (int(shape),) if isinstance(shape, (int, float)) else tuple(int(s) for s in shape)


ALIASES = core_aliases(
    "abs",
    "exp",
    "log",
    "log1p",
    "expm1",
    "sqrt",
    "square",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "relu",
    "floor",
    "ceil",
    "round",
    "sign",
    "maximum",
    "minimum",
    "where",
    "sum",
    "mean",
    "prod",
    "argmax",
    "argmin",
    "cumsum",
    "logsumexp",
    "gather",
    "scatter",
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "zeros_like",
    "ones_like",
    "full_like",
    "not_equal",
    "isnan",
    "isinf",
    "erf",
    "neg",
    "logical_and",
    "logical_or",
    "logical_not",
    "dot",
    # elementwise, as MegEngine (tg.equal is PyTorch's whole-tensor torch.equal: one bool)
    equal="eq",
    floor_div="floor_divide",
    mod="remainder",
    less="lt",
    less_equal="le",
    greater="gt",
    greater_equal="ge",
)
# F's elementwise functions are F.elemwise's: they take Python numbers as MegEngine's do
# (F.abs(-3.0)), have the names the core lacks (acos, logaddexp, the shifts...), and round
# halves away from zero as MegEngine does (the core rounds them to even)
ALIASES.update(
    {name: f"{__name__}.elemwise:{name}" for name in elemwise.__all__ if name not in vars()}
)
# every F.nn name is also at F's top level, as in MegEngine
ALIASES.update({name: f"{__name__}.nn:{name}" for name in nn.__all__ if name not in vars()})
from .vision import interpolate  # noqa: E402,F401  (also at F's top level in MegEngine)

HINTS = {
    "cond_take": "not provided; use boolean indexing x[mask]",
    "distributed": "use mge.distributed.make_allreduce_cb with a GradManager",
    "debug_param": "not provided",
}
__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (mge.functional)",
    ALIASES,
    HINTS,
    Tensor,
    creating=("zeros_like", "ones_like", "full_like"),
)
__dir__ = facade_dir(__name__, ALIASES)
