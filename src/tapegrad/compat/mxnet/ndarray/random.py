"""`mx.nd.random`: legacy sampling functions (`shape=`), float32, from tapegrad's generator.

>>> a = mx.nd.random.normal(shape=1)
"""

from __future__ import annotations

from ....creation import normal as _normal
from ....creation import randint as _randint
from ....creation import uniform as _uniform
from ... import _facade
from ..context import device_of
from .ndarray import NDArray

__all__ = ["uniform", "normal", "randn", "randint", "seed"]


def _shape(shape):
    if shape is None:
        return (1,)  # MXNet's legacy default: one sample
    return (int(shape),) if isinstance(shape, int) else tuple(shape)


def uniform(low=0.0, high=1.0, shape=None, dtype=None, ctx=None, **_):
    """Samples from U[low, high) of the given `shape`."""
    return _uniform(low, high, _shape(shape), dtype=dtype, device=device_of(ctx))


def normal(loc=0.0, scale=1.0, shape=None, dtype=None, ctx=None, **_):
    """Samples from N(loc, scale**2) of the given `shape`."""
    return _normal(loc, scale, _shape(shape), dtype=dtype, device=device_of(ctx))


def randn(*shape, loc=0.0, scale=1.0, dtype=None, ctx=None, **_):
    return normal(loc, scale, shape or None, dtype=dtype, ctx=ctx)


def randint(low, high, shape=None, dtype=None, ctx=None, **_):
    return _randint(low, high, _shape(shape), dtype=dtype or "int32", device=device_of(ctx))


def seed(seed_state, ctx="all"):
    """Seed tapegrad's generator of this thread (streams differ from MXNet's)."""
    from ....random import manual_seed

    manual_seed(seed_state)


# the samples are this module's arrays
uniform, normal, randn, randint = (
    _facade.returning(NDArray, f) for f in (uniform, normal, randn, randint)
)

__getattr__ = _facade.facade_getattr(
    __name__,
    "the MXNet facade (mx.nd.random)",
    {},
    {"shuffle": "not provided; index with a permutation from numpy.random"},
)
