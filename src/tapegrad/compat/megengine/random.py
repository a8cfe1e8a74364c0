"""`mge.random`: seed, normal, uniform (tapegrad's generator; streams differ from MegEngine's)."""

from __future__ import annotations

from ...creation import normal as _normal
from ...creation import uniform as _uniform
from .._facade import facade_getattr, returns
from ._tensor import Tensor

__all__ = ["seed", "normal", "uniform"]


def seed(seed):  # noqa: A002
    from ...random import manual_seed

    manual_seed(seed)


@returns(Tensor)
def normal(mean=0.0, std=1.0, size=None):
    """Samples of N(mean, std**2), an `mge.Tensor` of shape `size`."""
    return _normal(mean, std, () if size is None else tuple(size))


@returns(Tensor)
def uniform(low=0.0, high=1.0, size=None):
    """Samples of U[low, high), an `mge.Tensor` of shape `size`."""
    return _uniform(low, high, () if size is None else tuple(size))


__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (mge.random)",
    {},
    {
        "permutation": "not provided; use numpy.random.permutation",
        "shuffle": "not provided; index with numpy.random.permutation",
    },
)
