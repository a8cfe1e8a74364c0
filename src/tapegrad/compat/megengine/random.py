"""`mge.random`: seed, normal, uniform (tapegrad's generator; streams differ from MegEngine's)."""
from __future__ import annotations

from ...creation import normal as _normal
from ...creation import uniform as _uniform
from .._facade import facade_getattr

__all__ = ["seed", "normal", "uniform"]


def seed(seed):  # noqa: A002
    from ...random import manual_seed

    manual_seed(seed)


def normal(mean=0.0, std=1.0, size=None):
    return _normal(mean, std, () if size is None else tuple(size))


def uniform(low=0.0, high=1.0, size=None):
    return _uniform(low, high, () if size is None else tuple(size))


__getattr__ = facade_getattr(__name__, "the MegEngine facade (mge.random)", {}, {
    "permutation": "not provided; use numpy.random.permutation",
    "shuffle": "not provided; index with numpy.random.permutation",
})
