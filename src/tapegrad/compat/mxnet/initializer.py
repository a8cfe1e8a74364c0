"""`mx.init`: MXNet's initializers (values drawn from tapegrad's generator).

An initializer is called with a parameter's name and shape and returns the initial values.

    >>> net = mx.gluon.nn.Dense(4, in_units=3)
    >>> net.initialize(init=mx.init.Xavier())
    >>> mx.gluon.Parameter("w", shape=(2, 3), init=mx.init.Constant(0.5))
    Parameter w (shape=(2, 3), dtype=float32)
"""

from __future__ import annotations

import math

import numpy as np

from ...random import generator
from .._facade import facade_getattr

__all__ = [
    "Initializer",
    "Uniform",
    "Normal",
    "Xavier",
    "MSRAPrelu",
    "Zero",
    "One",
    "Constant",
    "Orthogonal",
    "create",
]


class Initializer:
    """Base class: subclasses implement `_init_weight(name, shape) -> numpy array`.

    Gluon hands each parameter its own initializer when it has one (`bias_initializer=
    "zeros"`, ...) and the one given to `initialize()` otherwise, so no name-based rules
    apply here (as in MXNet's Gluon).
    """

    def __call__(self, name, shape, dtype="float32") -> np.ndarray:
        arr = np.asarray(self._init_weight(str(name or ""), tuple(shape)), dtype=np.float64)
        return arr.astype(dtype)

    def _init_weight(self, name, shape):  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement _init_weight")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other) -> bool:
        """Initializers of one kind with the same settings are equal (as MXNet's)."""
        if type(other) is not type(self):
            return NotImplemented
        mine, theirs = vars(self), vars(other)
        return mine.keys() == theirs.keys() and all(
            np.array_equal(np.asarray(mine[k]), np.asarray(theirs[k])) for k in mine
        )

    __hash__ = object.__hash__


class _Fill(Initializer):
    """Fills every parameter it is given with one value (names ignored, as MXNet's)."""

    value = 0.0

    def __call__(self, name, shape, dtype="float32") -> np.ndarray:
        return np.full(tuple(shape), self.value, dtype=dtype)


class Zero(_Fill):
    """Zeros."""

    value = 0.0


class One(_Fill):
    """Ones."""

    value = 1.0


class Constant(_Fill):
    """Every value set to `value`."""

    def __init__(self, value) -> None:
        self.value = value

    def __call__(self, name, shape, dtype="float32") -> np.ndarray:
        return np.broadcast_to(np.asarray(self.value, dtype=dtype), tuple(shape)).copy()


class Uniform(Initializer):
    """U(-scale, scale); MXNet's default initializer (scale 0.07)."""

    def __init__(self, scale: float = 0.07) -> None:
        self.scale = scale

    def _init_weight(self, name, shape):
        return generator().uniform(-self.scale, self.scale, shape)


class Normal(Initializer):
    """N(0, sigma**2)."""

    def __init__(self, sigma: float = 0.01) -> None:
        self.sigma = sigma

    def _init_weight(self, name, shape):
        return generator().normal(0.0, self.sigma, shape)


def _fans(shape):
    if len(shape) < 2:
        raise ValueError(
            f"Xavier/MSRAPrelu need a weight of at least 2 dimensions, got shape {shape}; "
            "use Uniform or Normal for this parameter"
        )
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


class Xavier(Initializer):
    """Glorot initialisation: `rnd_type` "uniform"|"gaussian", `factor_type` "avg"|"in"|"out"."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3) -> None:
        if rnd_type not in ("uniform", "gaussian"):
            raise ValueError(f"Xavier: rnd_type must be 'uniform' or 'gaussian', got {rnd_type!r}")
        if factor_type not in ("avg", "in", "out"):
            raise ValueError(
                f"Xavier: factor_type must be 'avg', 'in' or 'out', got {factor_type!r}"
            )
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def _init_weight(self, name, shape):
        fan_in, fan_out = _fans(shape)
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = math.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            return generator().uniform(-scale, scale, shape)
        return generator().normal(0.0, scale, shape)


class MSRAPrelu(Xavier):
    """He/Kaiming initialisation (Xavier, gaussian, magnitude 2/(1+slope^2))."""

    def __init__(self, factor_type="avg", slope=0.25) -> None:
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope**2))


class Orthogonal(Initializer):
    """A (scaled) random orthogonal matrix, reshaped to the parameter's shape."""

    def __init__(self, scale=1.414, rand_type="uniform") -> None:
        self.scale, self.rand_type = scale, rand_type

    def _init_weight(self, name, shape):
        rows, cols = shape[0], int(np.prod(shape[1:]))
        rng = generator()
        a = (
            rng.uniform(-1, 1, (rows, cols))
            if self.rand_type == "uniform"
            else rng.normal(0, 1, (rows, cols))
        )
        u, _, v = np.linalg.svd(a, full_matrices=False)
        q = u if u.shape == (rows, cols) else v
        return self.scale * q.reshape(shape)


_BY_NAME = {
    "zeros": Zero,
    "zero": Zero,
    "ones": One,
    "one": One,
    "uniform": Uniform,
    "normal": Normal,
    "xavier": Xavier,
    "msraprelu": MSRAPrelu,
    "orthogonal": Orthogonal,
}


def create(init) -> Initializer:
    """An initializer from an instance, a name ("zeros", "xavier", ...) or None (Uniform)."""
    if init is None:
        return Uniform()
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str):
        try:
            return _BY_NAME[init.lower()]()
        except KeyError:
            raise ValueError(
                f"unknown initializer {init!r}; known: {sorted(_BY_NAME)} (or pass an "
                "mx.init object)"
            ) from None
    if callable(init):
        return init
    raise TypeError(f"expected an initializer, a name or None, got {type(init).__name__}")


__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.init)",
    {},
    {
        "Bilinear": "not provided; build the kernel with NumPy and use Constant(array)",
        "LSTMBias": "not provided; set the forget-gate bias with param.set_data(...)",
        "Mixed": "not provided; initialize the blocks one by one",
    },
)
