"""`mx.init`: MXNet's initializers (values drawn from tapegrad's generator).

An initializer is called with a parameter's name and shape and returns the initial values.

    >>> net = mx.gluon.nn.Dense(4, in_units=3)
    >>> net.initialize(init=mx.init.Xavier())
    >>> mx.gluon.Parameter("w", shape=(2, 3), init=mx.init.Constant(0.5))
    Parameter w (shape=(2, 3), dtype=float32)
"""

from __future__ import annotations

import json
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
    "Bilinear",
    "LSTMBias",
    "create",
    "register",
]


class Initializer:
    """Base class. As in MXNet, a subclass implements `_init_weight(name, arr)`, which
    fills the array `arr` in place (`arr[:] = values`); the constructor's keyword arguments
    are kept in `_kwargs` (what `dumps()` writes).

    Gluon hands each parameter its own initializer when it has one (`bias_initializer=
    "zeros"`, ...) and the one given to `initialize()` otherwise, so no name-based rules
    apply here (as in MXNet's Gluon).

        >>> class Twos(mx.init.Initializer):
        ...     def _init_weight(self, name, arr):
        ...         arr[:] = 2
        >>> p = mx.gluon.Parameter("w", shape=(2,), init=Twos())
        >>> p.initialize()
    """

    def __init__(self, **kwargs) -> None:
        self._kwargs = kwargs

    def __call__(self, name, arr, dtype="float32"):
        """`init(name, arr)` fills the array `arr` in place (MXNet's call);
        `init(name, shape, dtype)` returns new values as a NumPy array (what Gluon
        Parameters use)."""
        from ...tensor import Tensor

        if isinstance(arr, Tensor):
            self._init_weight(name, arr)
            return None
        from . import ndarray

        out = ndarray.zeros(tuple(arr), dtype=dtype)
        returned = self._init_weight(str(name or ""), out)
        values = out.asnumpy() if returned is None else np.asarray(returned)
        return values.astype(dtype, copy=False)

    def _init_weight(self, name, arr):  # pragma: no cover - abstract
        raise NotImplementedError(
            f"{type(self).__name__} must implement _init_weight(name, arr), filling arr in place"
        )

    def dumps(self) -> str:
        """The initializer as JSON: `["<class name, lower case>", {constructor kwargs}]`."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other) -> bool:
        """Initializers of one kind with the same settings are equal (as MXNet's)."""
        if type(other) is not type(self):
            return NotImplemented
        mine = {k: v for k, v in vars(self).items() if k != "_kwargs"}
        theirs = {k: v for k, v in vars(other).items() if k != "_kwargs"}
        return mine.keys() == theirs.keys() and all(
            np.array_equal(_plain(mine[k]), _plain(theirs[k])) for k in mine
        )

    __hash__ = object.__hash__


def _plain(value):
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def _fill(arr, values) -> None:
    """Write `values` (a NumPy array or a number) into the array `arr`, in place."""
    arr[:] = values


class Zero(Initializer):
    """Zeros."""

    def _init_weight(self, name, arr):
        _fill(arr, 0.0)


class One(Initializer):
    """Ones."""

    def _init_weight(self, name, arr):
        _fill(arr, 1.0)


class Constant(Initializer):
    """Every value set to `value` (a number, or an array broadcast to the shape)."""

    def __init__(self, value) -> None:
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, name, arr):
        _fill(arr, _plain(self.value) if not np.isscalar(self.value) else self.value)

    def dumps(self) -> str:
        """As `Initializer.dumps`, an array value written as nested lists (MXNet's form)."""
        value = self._kwargs["value"]
        if not np.isscalar(value):
            self._kwargs["value"] = _plain(value).tolist()
        return super().dumps()


class LSTMBias(Initializer):
    """An LSTM bias (4 * hidden values, gates i, f, g, o): `forget_bias` for the forget
    gate, zeros for the rest, so the cell starts out keeping its state.

        >>> mx.init.LSTMBias(forget_bias=2.0)("lstm0_i2h_bias", (8,))
        array([0., 0., 2., 2., 0., 0., 0., 0.], dtype=float32)
    """

    def __init__(self, forget_bias=1.0) -> None:
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        n = arr.shape[0]
        if arr.ndim != 1 or n % 4:
            raise ValueError(
                f"LSTMBias: {name or 'the parameter'} has shape {tuple(arr.shape)}; it "
                "initializes an LSTM bias of 4 * hidden_size values"
            )
        values = np.zeros(n, dtype=np.float64)
        values[n // 4 : n // 2] = self.forget_bias
        _fill(arr, values)


class Bilinear(Initializer):
    """The bilinear-upsampling kernel, for a `Conv2DTranspose` weight
    (out, in, k_h, k_w): w[..., y, x] = (1 - |x / f - c|) * (1 - |y / f - c|) with
    f = ceil(k_w / 2), c = (2f - 1 - f % 2) / (2f)."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, name, arr):
        shape = tuple(arr.shape)
        if len(shape) != 4:
            raise ValueError(
                f"Bilinear: needs a 4-d convolution weight (out, in, k_h, k_w), got shape {shape}"
            )
        f = np.ceil(shape[3] / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        x = np.arange(shape[3])
        y = np.arange(shape[2])
        kernel = np.outer(1 - abs(y / f - c), 1 - abs(x / f - c))
        _fill(arr, np.broadcast_to(kernel, shape).astype(np.float32))


class Uniform(Initializer):
    """U(-scale, scale); MXNet's default initializer (scale 0.07)."""

    def __init__(self, scale: float = 0.07) -> None:
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, name, arr):
        _fill(arr, generator().uniform(-self.scale, self.scale, tuple(arr.shape)))


class Normal(Initializer):
    """N(0, sigma**2)."""

    def __init__(self, sigma: float = 0.01) -> None:
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, name, arr):
        _fill(arr, generator().normal(0.0, self.sigma, tuple(arr.shape)))


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
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def _init_weight(self, name, arr):
        shape = tuple(arr.shape)
        fan_in, fan_out = _fans(shape)
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = math.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            _fill(arr, generator().uniform(-scale, scale, shape))
        else:
            _fill(arr, generator().normal(0.0, scale, shape))


class MSRAPrelu(Xavier):
    """He/Kaiming initialisation (Xavier, gaussian, magnitude 2/(1+slope^2))."""

    def __init__(self, factor_type="avg", slope=0.25) -> None:
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope**2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


class Orthogonal(Initializer):
    """A (scaled) random orthogonal matrix, reshaped to the parameter's shape."""

    def __init__(self, scale=1.414, rand_type="uniform") -> None:
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale, self.rand_type = scale, rand_type

    def _init_weight(self, name, arr):
        shape = tuple(arr.shape)
        rows, cols = shape[0], int(np.prod(shape[1:]))
        rng = generator()
        a = (
            rng.uniform(-1, 1, (rows, cols))
            if self.rand_type == "uniform"
            else rng.normal(0, 1, (rows, cols))
        )
        u, _, v = np.linalg.svd(a, full_matrices=False)
        q = u if u.shape == (rows, cols) else v
        _fill(arr, self.scale * q.reshape(shape))


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
    "bilinear": Bilinear,
    "lstmbias": LSTMBias,
}


def register(klass):
    """Register an Initializer subclass under its lower-case class name, so that
    `create("name")` (and `initialize("name")`) finds it; returns the class (a decorator)."""
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise TypeError(f"register: expected an Initializer subclass, got {klass!r}")
    _BY_NAME[klass.__name__.lower()] = klass
    return klass


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
        "Mixed": "not provided; initialize the blocks one by one",
    },
)
