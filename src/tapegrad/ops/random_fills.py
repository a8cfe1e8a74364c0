"""In-place random fills, PyTorch's Tensor methods: `t.uniform_(a, b)`, `normal_`,
`bernoulli_`, `exponential_`, `random_`, `log_normal_`, `cauchy_`, `geometric_`.

Each draws from this thread's generator (`tg.manual_seed`) or `generator=` (a
`tg.Generator`), casts to the tensor's dtype and
writes through `registry.apply_inplace`, as `copy_` of a constant: the version counter is
bumped, a leaf that requires grad is refused while its tape records (wrap the fill in
`tg.no_grad()`, as `nn.init` does), and a recorded tensor's history gets no gradient through
the fill (PyTorch's zero derivative). Under `tg.compile` a fill is a draw the trace does not
explain (compile/random_draws.py): the signature runs eagerly, so the stream stays eager's.

    >>> _ = tg.manual_seed(0); t = tg.empty(3).uniform_(-1, 1); bool(((t >= -1) & (t < 1)).all())
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend
from ..random import resolve
from ..tensor import Tensor, _wrap
from .casting import _copy_from
from .registry import apply_inplace


def _rng(what: str, generator: Any) -> np.random.Generator:
    return resolve(what, generator)


def _check_tensor(what: str, t: Any) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: expected a Tensor, got {type(t).__name__}")


def _check_float(what: str, t: Tensor) -> None:
    if np.dtype(t.dtype).kind != "f":
        raise RuntimeError(
            f"{what}: not implemented for {t.dtype} tensors (as in PyTorch); fill a floating "
            "tensor (t.float()) or use random_() for integers"
        )


def _number(what: str, name: str, v: Any) -> float:
    if isinstance(v, Tensor) or not isinstance(v, (int, float, np.number)) or isinstance(v, bool):
        raise TypeError(f"{what}: {name} must be a Python number, got {v!r}")
    return float(v)


def _write(t: Tensor, values: np.ndarray) -> Tensor:
    """Write host `values` (t's shape) into t in place, as a constant copy."""
    arr = np.asarray(values).astype(t._data.dtype, copy=False)
    if type(t._data) is not np.ndarray:
        arr = backend.to_device(arr, "cuda")
    return apply_inplace(_copy_from, t, _wrap(arr, 0))


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of U[from, to), in place (PyTorch's `from` is `from_` here, or
    positional)."""
    _check_tensor("uniform_", self)
    _check_float("uniform_", self)
    lo, hi = _number("uniform_", "from", from_), _number("uniform_", "to", to)
    if not lo <= hi:
        raise RuntimeError(
            f"uniform_: expects to return a [from, to) range, but found from={lo} > to={hi}"
        )
    return _write(self, _rng("uniform_", generator).uniform(lo, hi, self.shape))


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of N(mean, std**2), in place."""
    _check_tensor("normal_", self)
    _check_float("normal_", self)
    m, s = _number("normal_", "mean", mean), _number("normal_", "std", std)
    if not s >= 0:
        raise RuntimeError(f"normal_: expects std >= 0.0, but found std {s}")
    return _write(self, _rng("normal_", generator).normal(m, s, self.shape))


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fill with exp(N(mean, std**2)) samples, in place (`mean`, `std` of the logarithm)."""
    _check_tensor("log_normal_", self)
    _check_float("log_normal_", self)
    m, s = _number("log_normal_", "mean", mean), _number("log_normal_", "std", std)
    if not s > 0:
        raise RuntimeError(f"log_normal_: expects std > 0.0, but found std={s}")
    return _write(self, _rng("log_normal_", generator).lognormal(m, s, self.shape))


def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of the exponential distribution of rate `lambd`, in place."""
    _check_tensor("exponential_", self)
    _check_float("exponential_", self)
    rate = _number("exponential_", "lambd", lambd)
    if not rate > 0:
        raise RuntimeError(f"exponential_: expects lambda > 0.0, but found lambda={rate}")
    return _write(self, _rng("exponential_", generator).exponential(1.0 / rate, self.shape))


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of the Cauchy distribution (location `median`, scale `sigma`)."""
    _check_tensor("cauchy_", self)
    _check_float("cauchy_", self)
    m, s = _number("cauchy_", "median", median), _number("cauchy_", "sigma", sigma)
    if not s > 0:
        raise RuntimeError(f"cauchy_: expects sigma > 0.0, but found sigma={s}")
    return _write(self, m + s * _rng("cauchy_", generator).standard_cauchy(self.shape))


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    _check_tensor("geometric_", self)
    q = _number("geometric_", "p", p)
    if not 0 < q < 1:
        raise RuntimeError(f"geometric_: expects p to be in (0, 1), but found p={q}")
    return _write(self, _rng("geometric_", generator).geometric(q, self.shape))


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator=None) -> Tensor:
    """Fill with 1 with probability `p` and 0 otherwise, in place; `p` is a number or a
    tensor of probabilities broadcastable to this tensor."""
    _check_tensor("bernoulli_", self)
    if isinstance(p, Tensor):
        probs = np.asarray(backend.to_device(p._data, "cpu"), dtype=np.float64)
        what = "bernoulli_: p"
        try:
            probs = np.broadcast_to(probs, self.shape)
        except ValueError:
            raise RuntimeError(
                f"{what} of shape {p.shape} can't be broadcast to the tensor's shape {self.shape}"
            ) from None
    else:
        probs = np.float64(_number("bernoulli_", "p", p))
    if not np.all((probs >= 0) & (probs <= 1)):
        raise RuntimeError("bernoulli_: expects 0 <= p <= 1")
    draws = _rng("bernoulli_", generator).random(self.shape) < probs
    return _write(self, draws)


def _default_high(dtype: np.dtype) -> int:
    """random_()'s upper end (exclusive) without `to`: every integer the dtype holds
    exactly, as PyTorch ([0, 2**mantissa] for floats, [0, max] for integers)."""
    if dtype.kind == "f":
        return 2 ** (np.finfo(dtype).nmant + 1) + 1
    if dtype.kind == "b":
        return 2
    return int(np.iinfo(dtype).max) + 1


def random_(self: Tensor, from_: int | None = None, to: int | None = None, *, generator=None):
    """Fill with integers drawn uniformly from [from, to), in place. `random_(to)` is
    [0, to); `random_()` covers the integers the dtype represents exactly."""
    _check_tensor("random_", self)
    dtype = np.dtype(self.dtype)
    if to is None and from_ is not None:  # random_(to), PyTorch's one-argument form
        from_, to = 0, from_
    lo = 0 if from_ is None else from_
    for name, v in (("from", lo), ("to", to)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
            raise TypeError(f"random_: {name} must be an integer, got {v!r}")
    hi = _default_high(dtype) if to is None else int(to)
    if not lo < hi:
        raise RuntimeError(
            f"random_: expects 'from' to be less than 'to', but got from={lo} >= to={hi}"
        )
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if lo < info.min or hi - 1 > info.max:
            raise RuntimeError(
                f"random_: [from, to) = [{lo}, {hi}) is out of the bounds of {self.dtype}"
            )
    rng = _rng("random_", generator)
    values: Any
    if hi - 1 > np.iinfo(np.int64).max:  # the full uint64 range
        values = rng.integers(lo, hi - 1, self.shape, dtype=np.uint64, endpoint=True)
    else:
        values = rng.integers(lo, hi - 1, self.shape, dtype=np.int64, endpoint=True)
    if dtype.kind == "f" and hi - lo > 2 ** (np.finfo(dtype).nmant + 1):
        values = values.astype(np.float64)  # rounds to the dtype's grid, as PyTorch's cast
    return _write(self, values)


#: Tensor methods (installed by tensor_methods)
METHODS = {
    "uniform_": uniform_,
    "normal_": normal_,
    "log_normal_": log_normal_,
    "exponential_": exponential_,
    "cauchy_": cauchy_,
    "geometric_": geometric_,
    "bernoulli_": bernoulli_,
    "random_": random_,
}
