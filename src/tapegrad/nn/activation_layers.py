"""Modules for nn/functional_activations.py (ReLU6 ... PReLU, channel dropout) and the
padding layers (ZeroPad2d, ConstantPad*d, ReflectionPad*d, ReplicationPad*d, CircularPad*d),
with PyTorch's constructor arguments and reprs."""

from __future__ import annotations

from ..creation import full
from . import functional_activations as FA
from . import functional_core as F
from .layers import _DropoutNd
from .module import Module, Parameter

__all__ = [
    "Hardtanh",
    "ReLU6",
    "Hardsigmoid",
    "Hardswish",
    "Mish",
    "SELU",
    "CELU",
    "Softsign",
    "LogSigmoid",
    "Softmin",
    "GLU",
    "Tanhshrink",
    "Softshrink",
    "Hardshrink",
    "Threshold",
    "PReLU",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
]


def _elementwise(name: str, fn, doc: str, shows_inplace: bool = True) -> type[Module]:
    """A parameterless activation module calling `fn(input)` (in place when constructed with
    inplace=True, where `fn` has that form; `shows_inplace`: its repr says so, as PyTorch's
    for most of them)."""

    def __init__(self, inplace: bool = False) -> None:
        Module.__init__(self)
        self.inplace = inplace

    def forward(self, input):
        return fn(input, inplace=True) if self.inplace else fn(input)

    def extra_repr(self) -> str:
        """`inplace=True` when set, as PyTorch prints it."""
        return "inplace=True" if self.inplace else ""

    forward.__doc__ = f"`F.{fn.__name__}` of the input."
    body = {"__doc__": doc, "__init__": __init__, "forward": forward}
    if "inplace" in fn.__code__.co_varnames[: fn.__code__.co_argcount]:
        if shows_inplace:
            body["extra_repr"] = extra_repr
    else:  # no in-place form (Softsign ...): the constructor takes no argument
        body["__init__"] = lambda self: Module.__init__(self)
        body["forward"] = lambda self, input: fn(input)
        body["forward"].__doc__ = forward.__doc__
    return type(name, (Module,), body)


Hardsigmoid = _elementwise(
    "Hardsigmoid", FA.hardsigmoid, "0 below -3, 1 above 3, x / 6 + 1/2 between.", False
)
Hardswish = _elementwise("Hardswish", FA.hardswish, "x * hardsigmoid(x).", False)
Mish = _elementwise("Mish", FA.mish, "x * tanh(softplus(x)).")
SELU = _elementwise("SELU", FA.selu, "scale * elu(x, alpha), self-normalising constants.")
Softsign = _elementwise("Softsign", FA.softsign, "x / (1 + |x|).")
LogSigmoid = _elementwise("LogSigmoid", FA.logsigmoid, "log(sigmoid(x)).")
Tanhshrink = _elementwise("Tanhshrink", FA.tanhshrink, "x - tanh(x).")
for _cls in (Hardsigmoid, Hardswish, Mish, SELU, Softsign, LogSigmoid, Tanhshrink):
    _cls.__module__ = __name__


class Hardtanh(Module):
    """x clipped to [min_val, max_val] (`F.hardtanh`)."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if min_val > max_val:
            raise ValueError(
                f"Hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})"
            )
        self.min_val, self.max_val, self.inplace = float(min_val), float(max_val), inplace

    def forward(self, input):
        return FA.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else ""
        )


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (`F.celu`)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return FA.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softmin(Module):
    """softmax(-x) along `dim` (`F.softmin`)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return FA.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GLU(Module):
    """a * sigmoid(b) of the two halves along `dim` (`F.glu`)."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return FA.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softshrink(Module):
    """x - lambd above lambd, x + lambd below -lambd, 0 between (`F.softshrink`)."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return FA.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Module):
    """x where |x| > lambd, else 0 (`F.hardshrink`)."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return FA.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Threshold(Module):
    """x where x > threshold, else value (`F.threshold`)."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return FA.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else ""
        )


class PReLU(Module):
    """x where x > 0, else a * x, with a learned `weight` a: one value, or one per channel
    (`num_parameters` = the channels, dim 1), starting at `init`."""

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None
    ) -> None:
        super().__init__()
        if num_parameters < 1:
            raise ValueError(f"PReLU: num_parameters must be positive, got {num_parameters}")
        self.num_parameters = num_parameters
        self.weight = Parameter(
            full((num_parameters,), init, dtype=dtype or "float32", device=device)
        )

    def forward(self, input):
        return FA.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class _ChannelDropout(_DropoutNd):
    _fn = staticmethod(FA.dropout2d)


class Dropout1d(_ChannelDropout):
    """Zeroes whole channels of (N, C, L) inputs with probability p while training."""

    _fn = staticmethod(FA.dropout1d)


class Dropout2d(_ChannelDropout):
    """Zeroes whole channels of (N, C, H, W) inputs with probability p while training."""

    _fn = staticmethod(FA.dropout2d)


class Dropout3d(_ChannelDropout):
    """Zeroes whole channels of (N, C, D, H, W) inputs with probability p while training."""

    _fn = staticmethod(FA.dropout3d)


# ------------------------------------------------------------------ padding
class _Pad(Module):
    _dims = 2
    _mode = "constant"

    def __init__(self, padding, value: float = 0.0) -> None:
        super().__init__()
        n = 2 * self._dims
        if isinstance(padding, int):
            padding = (padding,) * n
        padding = tuple(int(p) for p in padding)
        if len(padding) != n:
            raise ValueError(
                f"{type(self).__name__}: padding must be an int or {n} ints (left, right, ... "
                f"for the last {self._dims} dims), got {padding}"
            )
        self.padding, self.value = padding, value

    def forward(self, input):
        if self._mode == "constant":
            return F.pad(input, self.padding, mode="constant", value=self.value)
        return F.pad(input, self.padding, mode=self._mode)

    def extra_repr(self) -> str:
        if self._mode == "constant" and not type(self).__name__.startswith("Zero"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _pad_class(name: str, dims: int, mode: str) -> type[Module]:
    what = {
        "constant": "a constant",
        "reflect": "reflections",
        "replicate": "the edge values",
        "circular": "the other end's values",
    }[mode]
    doc = f"Pads the last {dims} dims with {what} (`F.pad(mode={mode!r})`)."
    zero = name.startswith("Zero")

    def __init__(self, padding, *args) -> None:
        # ZeroPad*d(padding); ConstantPad*d(padding, value); the others (padding)
        if zero or mode != "constant":
            if args:
                raise TypeError(f"{name}() takes only padding, got {len(args)} more arguments")
            _Pad.__init__(self, padding, 0.0)
        else:
            if len(args) != 1:
                raise TypeError(f"{name}() takes padding and value")
            _Pad.__init__(self, padding, args[0])

    cls = type(name, (_Pad,), {"__doc__": doc, "__init__": __init__, "_dims": dims, "_mode": mode})
    cls.__module__ = __name__
    return cls


ZeroPad1d = _pad_class("ZeroPad1d", 1, "constant")
ZeroPad2d = _pad_class("ZeroPad2d", 2, "constant")
ZeroPad3d = _pad_class("ZeroPad3d", 3, "constant")
ConstantPad1d = _pad_class("ConstantPad1d", 1, "constant")
ConstantPad2d = _pad_class("ConstantPad2d", 2, "constant")
ConstantPad3d = _pad_class("ConstantPad3d", 3, "constant")
ReflectionPad1d = _pad_class("ReflectionPad1d", 1, "reflect")
ReflectionPad2d = _pad_class("ReflectionPad2d", 2, "reflect")
ReflectionPad3d = _pad_class("ReflectionPad3d", 3, "reflect")
ReplicationPad1d = _pad_class("ReplicationPad1d", 1, "replicate")
ReplicationPad2d = _pad_class("ReplicationPad2d", 2, "replicate")
ReplicationPad3d = _pad_class("ReplicationPad3d", 3, "replicate")
CircularPad1d = _pad_class("CircularPad1d", 1, "circular")
CircularPad2d = _pad_class("CircularPad2d", 2, "circular")
CircularPad3d = _pad_class("CircularPad3d", 3, "circular")
