"""Transforms: invertible maps with a log |det Jacobian| (PyTorch's
`torch.distributions.transforms`): ExpTransform, AffineTransform, SigmoidTransform.

>>> from tapegrad.distributions.transforms import ExpTransform
>>> t = ExpTransform()
>>> t(tg.tensor(0.0)), t.inv(tg.tensor(1.0))
(tensor(1.), tensor(0.))
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import constraints

__all__ = ["AffineTransform", "ExpTransform", "SigmoidTransform", "Transform"]


class Transform:
    """An invertible map y = f(x) with `log_abs_det_jacobian(x, y)`; `inv` is the inverse
    map as a Transform. `sign` is +1 or -1 for a monotone map of one variable.

    >>> from tapegrad.distributions.transforms import AffineTransform
    >>> AffineTransform(1.0, 2.0).inv(tg.tensor(5.0))
    tensor(2.)
    """

    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real
    bijective = True
    event_dim = 0

    @property
    def sign(self) -> int:
        """+1 for an increasing map, -1 for a decreasing one."""
        return 1

    @property
    def inv(self) -> Transform:
        """The inverse transform."""
        return _Inverse(self)

    def __call__(self, x: Tensor) -> Tensor:
        return self._call(x)

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |dy/dx| at (x, y = self(x))."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _Inverse(Transform):
    def __init__(self, transform: Transform) -> None:
        self._inv = transform
        self.domain = transform.codomain
        self.codomain = transform.domain
        self.event_dim = transform.event_dim

    @property
    def sign(self) -> int:
        """The inverted transform's sign (an inverse is monotone the same way)."""
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        """The transform this one inverts."""
        return self._inv

    def _call(self, x: Tensor) -> Tensor:
        return self._inv._inverse(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self._inv._call(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)


class ExpTransform(Transform):
    """y = exp(x).

    >>> from tapegrad.distributions.transforms import ExpTransform
    >>> ExpTransform().log_abs_det_jacobian(tg.tensor(2.0), tg.tensor(2.0).exp())
    tensor(2.)
    """

    codomain = constraints.positive

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class SigmoidTransform(Transform):
    """y = sigmoid(x) = 1 / (1 + exp(-x)).

    >>> from tapegrad.distributions.transforms import SigmoidTransform
    >>> SigmoidTransform()(tg.tensor(0.0))
    tensor(0.5)
    """

    codomain = constraints.unit_interval

    def _call(self, x: Tensor) -> Tensor:
        return x.sigmoid()

    def _inverse(self, y: Tensor) -> Tensor:
        from .utils import clamp_probs

        y = clamp_probs(y)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        import tapegrad.nn.functional as F

        return -F.softplus(-x) - F.softplus(x)


class AffineTransform(Transform):
    """y = loc + scale * x (over `event_dim` rightmost dimensions at once).

    >>> from tapegrad.distributions.transforms import AffineTransform
    >>> t = AffineTransform(1.0, -2.0)
    >>> t(tg.tensor(3.0)), t.sign
    (tensor(-5.), -1)
    """

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0) -> None:
        self.loc = loc
        self.scale = scale
        self.event_dim = event_dim

    @property
    def sign(self) -> int:
        """The sign of a scalar `scale` (+1 increasing, -1 decreasing)."""
        if isinstance(self.scale, Tensor):
            if self.scale.numel() != 1:
                raise NotImplementedError("AffineTransform.sign: only a scalar scale has one sign")
            return 1 if self.scale.item() > 0 else -1
        return 1 if self.scale > 0 else -1

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        import math

        import tapegrad as tg

        if isinstance(self.scale, Tensor):
            result = self.scale.abs().log()
        else:
            result = tg.full(tuple(x.shape), math.log(abs(self.scale)), dtype=x.dtype)
        shape = tuple(x.shape)
        result = result.expand(*shape) if tuple(result.shape) != shape else result
        if self.event_dim:
            result = result.reshape(*shape[: len(shape) - self.event_dim], -1).sum(-1)
        return result

    def __repr__(self) -> str:
        return f"AffineTransform(loc={self.loc}, scale={self.scale})"
