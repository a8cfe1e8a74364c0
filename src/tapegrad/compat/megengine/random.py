"""`mge.random`: MegEngine's samplers and `RNG` on NumPy generators (tapegrad's seeding;
the streams differ from MegEngine's, the distributions and shapes are its).

The module-level functions draw from this thread's tapegrad generator, which
`mge.random.seed(s)` (= `tg.manual_seed(s)`) makes reproducible; `RNG(seed)` is a stream of
its own (two `RNG(111)` give the same numbers). Shapes follow MegEngine 1.13: `uniform` and
`normal` with `size=None` give shape (1,); `gamma`, `beta` and `poisson` give
`size + broadcast(parameters).shape`; all return float32 `mge.Tensor`s.

    >>> import tapegrad.compat.megengine as mge
    >>> r = mge.random.RNG(seed=7)
    >>> r.gamma(mge.tensor([1.0, 4.0]), scale=2, size=(3,)).shape
    (3, 2)
    >>> a, b = mge.random.RNG(7).permutation(5), mge.random.RNG(7).permutation(5)
    >>> sorted(a.numpy().tolist()), bool((a.numpy() == b.numpy()).all())
    ([0, 1, 2, 3, 4], True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._facade import facade_getattr
from ._tensor import Tensor

__all__ = [
    "RNG",
    "seed",
    "uniform",
    "normal",
    "gamma",
    "beta",
    "poisson",
    "exponential",
    "permutation",
    "shuffle",
]


def seed(seed: int) -> None:  # noqa: A002 (MegEngine's name)
    """Seed the generator the module-level samplers draw from (tapegrad's thread generator)."""
    from ...random import manual_seed

    manual_seed(seed)


def _param(where: str, name: str, value: Any, positive: bool) -> np.ndarray:
    """A distribution parameter (number or tensor) as a float64 array, checked > 0 (or >= 0)."""
    if isinstance(value, Tensor) or hasattr(value, "numpy"):
        arr = np.asarray(value.numpy(), dtype=np.float64)
    else:
        arr = np.asarray(value, dtype=np.float64)
    bad = (arr <= 0) if positive else (arr < 0)
    if bad.any():
        rel = "> 0" if positive else ">= 0"
        raise ValueError(f"mge.random.{where}: {name} must be {rel}, got {value!r}")
    return arr


def _size(where: str, size: Any) -> tuple:
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return () if size == 0 else (int(size),)  # MegEngine: size=0 adds no axis
    try:
        return tuple(int(s) for s in size)
    except TypeError:
        raise TypeError(
            f"mge.random.{where}: size must be None, an int or a sequence of ints, got {size!r}"
        ) from None


def _out(values: Any, dtype: Any = np.float32) -> Tensor:
    return Tensor(np.array(values, dtype=dtype))


class RNG:
    """A random number generator with MegEngine's sampler methods. `seed=None` draws from
    tapegrad's thread generator (what `mge.random.seed` seeds); an int seed gives a stream
    of its own. `device` is accepted and ignored (the facade has one device).

    >>> import tapegrad.compat.megengine as mge
    >>> a = mge.random.RNG(seed=3).uniform(size=(2, 2))
    >>> b = mge.random.RNG(seed=3).uniform(size=(2, 2))
    >>> a.shape, bool((a.numpy() == b.numpy()).all())
    ((2, 2), True)
    """

    def __init__(self, seed: int | None = None, device: Any = None) -> None:
        self._device = device
        if seed is None:
            self._own: np.random.Generator | None = None
        else:
            from ...random import _check_seed

            self._own = np.random.default_rng(_check_seed("mge.random.RNG", seed))

    def _rng(self) -> np.random.Generator:
        if self._own is not None:
            from ...random import _note_draw

            # tg.compile (mge.jit.trace) watches the thread generator; a draw from a stream
            # of our own must be reported, or a replay would repeat frozen samples
            _note_draw()
            return self._own
        from ...random import generator

        return generator()

    def uniform(self, low: float = 0, high: float = 1, size: Any = None) -> Tensor:
        """Samples of U[low, high); `size=None` gives shape (1,) (MegEngine)."""
        shape = (1,) if size is None else _size("uniform", size)
        return _out(self._rng().uniform(low, high, shape))

    def normal(self, mean: float = 0, std: float = 1, size: Any = None) -> Tensor:
        """Samples of N(mean, std**2); `size=None` gives shape (1,) (MegEngine)."""
        if std < 0:
            raise ValueError(f"mge.random.normal: std must be >= 0, got {std!r}")
        shape = (1,) if size is None else _size("normal", size)
        return _out(self._rng().normal(mean, std, shape))

    def gamma(self, shape: Any, scale: Any = 1, size: Any = None) -> Tensor:
        """Gamma(shape, scale) samples (mean shape * scale); output shape
        `size + broadcast(shape, scale).shape`."""
        k = _param("gamma", "shape", shape, positive=True)
        s = _param("gamma", "scale", scale, positive=True)
        out = _size("gamma", size) + np.broadcast_shapes(k.shape, s.shape)
        return _out(self._rng().gamma(k, s, out))

    def beta(self, alpha: Any, beta: Any, size: Any = None) -> Tensor:
        """Beta(alpha, beta) samples in (0, 1); output shape
        `size + broadcast(alpha, beta).shape`."""
        a = _param("beta", "alpha", alpha, positive=True)
        b = _param("beta", "beta", beta, positive=True)
        out = _size("beta", size) + np.broadcast_shapes(a.shape, b.shape)
        return _out(self._rng().beta(a, b, out))

    def poisson(self, lam: Any, size: Any = None) -> Tensor:
        """Poisson(lam) counts as float32; output shape `size + lam.shape`."""
        lam_ = _param("poisson", "lam", lam, positive=False)
        return _out(self._rng().poisson(lam_, _size("poisson", size) + lam_.shape))

    def exponential(self, rate: Any = 1.0, size: Any = None) -> Tensor:
        """Exponential(rate) samples (mean 1 / rate); output shape `size + rate.shape`."""
        r = _param("exponential", "rate", rate, positive=True)
        return _out(self._rng().exponential(1.0 / r, _size("exponential", size) + r.shape))

    def permutation(self, n: Any, *, dtype: Any = "int32") -> Tensor:
        """An int `n`: a random order of 0..n-1 (of `dtype`). A tensor: a copy with its
        first axis shuffled (a 0-d tensor gives a 1-element one, as MegEngine)."""
        if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
            if n < 0:
                raise ValueError(f"mge.random.permutation: n must be >= 0, got {n}")
            return _out(self._rng().permutation(int(n)), np.dtype(dtype))
        if not hasattr(n, "numpy"):
            raise TypeError(
                f"mge.random.permutation: n must be an int or a Tensor, got {type(n).__name__}"
            )
        arr = np.asarray(n.numpy())
        if arr.ndim == 0:
            arr = arr.reshape(1)
        return _out(arr[self._rng().permutation(arr.shape[0])], arr.dtype)

    def shuffle(self, inp: Any) -> None:
        """Shuffle `inp` along its first axis in place (returns None, as MegEngine)."""
        from ...tensor import write_data

        if not hasattr(inp, "numpy") or inp.ndim == 0 or inp.shape[0] == 0:
            raise ValueError(
                "mge.random.shuffle: inp must be a Tensor with at least one element along "
                "its first axis"
            )
        arr = np.asarray(inp.numpy())
        write_data(inp, arr[self._rng().permutation(arr.shape[0])])


_default = RNG()
uniform = _default.uniform
normal = _default.normal
gamma = _default.gamma
beta = _default.beta
poisson = _default.poisson
exponential = _default.exponential
permutation = _default.permutation
shuffle = _default.shuffle

__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (mge.random)",
    {},
    {"multinomial": "not provided; use numpy.random.Generator.choice on the probabilities"},
)
