"""`mx.np.ndarray`: the array type of `mx.np`, which follows `mxnet.numpy` (MXNet 1.9.1).

A subclass of `mx.nd.NDArray`, as in MXNet, so Gluon (whose parameters are NDArrays
unless `npx.set_np()` was called) takes either, and an op mixing the two returns an
`mx.np.ndarray`. NumPy's meaning where it differs from NDArray's and PyTorch's:
`reshape` (NumPy's shape, one -1) and `transpose(*axes)` / `T` return copies (as
`mxnet.numpy` does, unlike NumPy), `flatten()` is 1-D, `max`/`min` return values,
`std`/`var` divide by N (`ddof=0`), `item()`; `as_nd_ndarray()` goes back.
"""

from __future__ import annotations

import numpy as _np

from ..._numpy_style import _shape, amax, amin, std, transpose, var
from ..ndarray.ndarray import NDArray


def _tg():
    import tapegrad

    return tapegrad


class ndarray(NDArray):  # noqa: N801 - mxnet.numpy's name
    """An `mx.np` array (`mx.np.array([1, 2])`: float32, as MXNet).

    >>> x = mx.np.arange(6).reshape(2, 3)
    >>> x.size, x.T.shape, x.max(axis=1).tolist()
    (6, (3, 2), [2.0, 5.0])
    """

    __slots__ = ()

    def __repr__(self) -> str:
        """NumPy's form, with `dtype=` shown unless float32 (mx.np's default) and the
        context unless it is the CPU.

        >>> mx.np.array([1, 2]), mx.np.array([1, 2], dtype="int64")
        (array([1., 2.]), array([1, 2], dtype=int64))
        """
        values = self.asnumpy()
        text = _np.array2string(values, separator=", ", prefix="array(")
        if self.dtype != _np.float32:
            text += f", dtype={self.dtype.name}"
        if self.device != "cpu":
            text += f", ctx={self.context}"
        return f"array({text})"

    def __str__(self) -> str:
        """NumPy's `str`, with `@ctx` after it off the CPU."""
        text = str(self.asnumpy())
        return text if self.device == "cpu" else f"{text} @{self.context}"

    def reshape(self, *shape, order="C"):
        """A copy with NumPy's new shape (`reshape(2, 3)` or `reshape((2, 3))`, one -1)."""
        if order != "C":
            raise ValueError(f"reshape: order={order!r} is not supported; only 'C'")
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return _tg().clone(_tg().reshape(self, _shape(shape)))

    def transpose(self, *axes):
        """A copy with the axes permuted (reversed when none are given)."""
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        return _tg().clone(transpose(self, tuple(axes) if axes else None))

    @property
    def T(self):  # noqa: N802 - NumPy's name
        """A copy with the axes reversed."""
        return self.transpose()

    def flatten(self, order="C"):
        """A 1-D copy."""
        return self.reshape(-1, order=order)

    def max(self, axis=None, out=None, keepdims=False):  # noqa: A003
        """The maximum over `axis` (values only, as NumPy)."""
        return amax(self, axis, keepdims=keepdims)

    def min(self, axis=None, out=None, keepdims=False):  # noqa: A003
        """The minimum over `axis` (values only, as NumPy)."""
        return amin(self, axis, keepdims=keepdims)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """The standard deviation, dividing by `N - ddof` (N by default, as NumPy)."""
        return std(self, axis, ddof=ddof, keepdims=keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """The variance, dividing by `N - ddof` (N by default, as NumPy)."""
        return var(self, axis, ddof=ddof, keepdims=keepdims)


ndarray._array_class = ndarray
