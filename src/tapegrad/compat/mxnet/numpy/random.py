"""`mx.np.random`: NumPy-style sampling (`size=`), float32, from tapegrad's generator.

The streams differ from MXNet's: seed with `mx.random.seed(s)` (or `tg.manual_seed`) for
reproducible runs, but do not expect MXNet's numbers.
"""

from __future__ import annotations

from ....creation import normal as _normal
from ....creation import randint as _randint
from ....creation import uniform as _uniform
from ... import _facade
from ..context import device_of
from .multiarray import ndarray

__all__ = ["uniform", "normal", "randn", "rand", "randint", "seed"]


def _size(size):
    if size is None:
        return ()
    return (int(size),) if isinstance(size, int) else tuple(size)


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, device=None):
    """Samples from U[low, high)."""
    return _uniform(low, high, _size(size), dtype=dtype, device=device_of(device or ctx))


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, device=None):
    """Samples from N(loc, scale**2)."""
    return _normal(loc, scale, _size(size), dtype=dtype, device=device_of(device or ctx))


def randn(*size, **kwargs):
    """Standard normal samples of shape `size`."""
    return normal(0.0, 1.0, size, **kwargs)


def rand(*size, **kwargs):
    """Uniform samples on [0, 1) of shape `size`."""
    return uniform(0.0, 1.0, size, **kwargs)


def randint(low, high=None, size=None, dtype=None, ctx=None, device=None):
    """Integers in [low, high)."""
    return _randint(low, high, _size(size), dtype=dtype, device=device_of(device or ctx))


def seed(seed):  # noqa: A002
    """Seed tapegrad's generator of this thread."""
    from ....random import manual_seed

    manual_seed(seed)


# the samples are this module's arrays
uniform, normal, randn, rand, randint = (
    _facade.returning(ndarray, f) for f in (uniform, normal, randn, rand, randint)
)

__getattr__ = _facade.facade_getattr(
    __name__,
    "the MXNet facade (mx.np.random)",
    {},
    {
        "choice": "not provided; sample indices with randint",
        "shuffle": "not provided; index with a permutation from numpy.random",
    },
)
