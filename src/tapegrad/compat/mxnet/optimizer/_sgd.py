"""SGD, NAG and Signum: MXNet 1.9.1's `sgd_(mom_)update`, `nag_mom_update` and
`signsgd_update` / `signum_update` on dense arrays.

In these update operators the gradient is `rescale_grad * grad`, clipped (when
`clip_gradient` is a positive number) before the weight decay is added:

    >>> opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01)
    >>> w, g = mx.nd.ones((2,)), mx.nd.array([1.0, -1.0])
    >>> mom = opt.create_state(0, w)
    >>> opt.update(0, w, g, mom); w.asnumpy()
    array([0.899, 1.099], dtype=float32)
"""

from __future__ import annotations

from ....tensor import write_data
from ._base import Optimizer, _raw, _xp, _zeros, register

__all__ = ["SGD", "NAG", "Signum"]


class _Momentum(Optimizer):
    """SGD and NAG: a momentum buffer (None for momentum 0) and, for float16 weights
    with multi_precision, the state `(momentum, float32 master weight)`."""

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        # row_sparse storage is not provided: for dense arrays lazy updates are the
        # standard ones, as in MXNet
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return _zeros(weight, weight.dtype) if self.momentum != 0.0 else None

    def create_state_multi_precision(self, index, weight):
        import numpy as np

        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            return (self.create_state(index, master), master)
        return super().create_state_multi_precision(index, weight)

    def update_multi_precision(self, index, weight, grad, state) -> None:
        import numpy as np

        if self.multi_precision and weight.dtype == np.float16 and isinstance(state, tuple):
            mom, master = state
            self.update(index, master, grad.astype(np.float32), mom)
            write_data(weight, master)
        else:
            self.update(index, weight, grad, state)

    def _grad(self, grad):
        """rescale_grad * grad, clipped as the update operators clip."""
        g = self.rescale_grad * _raw(grad)
        c = self._kernel_clip()
        return _xp(grad).clip(g, -c, c) if c is not None else g


@register
class SGD(_Momentum):
    """SGD with momentum and weight decay (MXNet's update)::

        mom = momentum * mom - lr * wd * weight - lr * clip(rescale_grad * grad)
        weight = weight + mom

    and without momentum `weight = (1 - lr * wd) * weight - lr * clip(rescale_grad * grad)`.

    Args:
        momentum: the momentum (0: no state).
        lazy_update: accepted; it matters only for row_sparse storage, which the facade
            does not provide.
        **kwargs: the options of `Optimizer` (learning_rate 0.01 by default).
    """

    def update(self, index, weight, grad, state) -> None:
        lr, wd = self._begin(index, weight, grad)
        w, g = _raw(weight), self._grad(grad)
        if state is None:
            write_data(weight, (1 - lr * wd) * w - lr * g)
            return
        mom = self.momentum * _raw(state) - lr * wd * w - lr * g
        write_data(state, mom)
        write_data(weight, w + _raw(state))


@register
class NAG(_Momentum):
    """Nesterov accelerated gradient (MXNet's `nag_mom_update`)::

        step = lr * (clip(rescale_grad * grad) + wd * weight)
        weight = weight + momentum**2 * mom - (1 + momentum) * step
        mom = momentum * mom - step

    and without momentum, SGD's update.
    """

    def update(self, index, weight, grad, state) -> None:
        lr, wd = self._begin(index, weight, grad)
        w, g = _raw(weight), self._grad(grad)
        if state is None:
            write_data(weight, (1 - lr * wd) * w - lr * g)
            return
        m = self.momentum
        step = lr * (g + wd * w)
        new_w = w + m * m * _raw(state) - (m + 1) * step
        write_data(state, m * _raw(state) - step)
        write_data(weight, new_w)


@register
class Signum(Optimizer):
    """Signum: the sign of a momentum of the gradient (MXNet's `signum_update`)::

        mom = momentum * mom - (1 - momentum) * (wd * weight + clip(rescale_grad * grad))
        weight = (1 - lr * wd_lh) * weight + lr * sign(mom)

    With momentum 0 it is signSGD, `weight = (1 - lr * (wd + wd_lh)) * weight - lr *
    sign(grad)` (the reference of MXNet's tests; its operator has no wd_lh).

    Args:
        learning_rate: default 0.01.
        momentum: default 0.9 (0: no state).
        wd_lh: the decoupled weight decay.
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        return _zeros(weight, weight.dtype) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state) -> None:
        lr, wd = self._begin(index, weight, grad)
        xp, w = _xp(weight), _raw(weight)
        if state is None:
            write_data(weight, (1 - lr * (wd + self.wd_lh)) * w - lr * xp.sign(_raw(grad)))
            return
        g = self.rescale_grad * _raw(grad)
        c = self._kernel_clip()
        if c is not None:
            g = xp.clip(g, -c, c)
        m = self.momentum
        write_data(state, m * _raw(state) - (1 - m) * (wd * w + g))
        write_data(weight, (1 - lr * self.wd_lh) * w + lr * xp.sign(_raw(state)))
