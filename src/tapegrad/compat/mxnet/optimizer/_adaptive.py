"""Adam, AdaGrad, RMSProp, AdaDelta, Adamax, Nadam, FTML and Ftrl: MXNet 1.9.1's updates on
dense arrays.

Where MXNet runs an update operator (Adam, RMSProp, FTML, Ftrl) `clip_gradient` clips only
when it is a positive number; where its update is Python (AdaGrad, AdaDelta, Adamax, Nadam)
any `clip_gradient` that is not None clips. The states of AdaGrad, RMSProp, AdaDelta and Ftrl
are float32 whatever the weight's dtype (MXNet makes them with `zeros(shape, ctx)`).

    >>> opt = mx.optimizer.Adam(learning_rate=0.1)
    >>> w, g = mx.nd.ones((2,)), mx.nd.array([1.0, -2.0])
    >>> state = opt.create_state(0, w)
    >>> opt.update(0, w, g, state); w.asnumpy().round(4)
    array([0.9, 1.1], dtype=float32)
"""

from __future__ import annotations

import math

from ....tensor import write_data
from ._base import Optimizer, _raw, _xp, _zeros, register

__all__ = ["Adam", "AdaGrad", "RMSProp", "AdaDelta", "Adamax", "Nadam", "FTML", "Ftrl"]


def _python_clip(opt: Optimizer, xp, g):
    c = opt.clip_gradient
    return xp.clip(g, -c, c) if c is not None else g


def _kernel_clip(opt: Optimizer, xp, g):
    c = opt._kernel_clip()
    return xp.clip(g, -c, c) if c is not None else g


@register
class Adam(Optimizer):
    """Adam as MXNet's `adam_update` (decay before clipping, epsilon outside the bias
    correction, which is folded into the rate)::

        g = clip(rescale_grad * grad + wd * weight)
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g**2
        weight -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + epsilon)

    Args:
        learning_rate: default 0.001. beta1, beta2, epsilon: the moments' decays and the
            denominator's term. lazy_update: accepted (row_sparse only in MXNet).
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
        lazy_update=True,
        **kwargs,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (_zeros(weight, weight.dtype), _zeros(weight, weight.dtype))

    def update(self, index, weight, grad, state) -> None:
        lr, wd = self._begin(index, weight, grad)
        t = self._index_update_count[index]
        lr *= math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)
        xp, w = _xp(weight), _raw(weight)
        g = _kernel_clip(self, xp, self.rescale_grad * _raw(grad) + wd * w)
        mean, var = state
        write_data(mean, self.beta1 * _raw(mean) + (1.0 - self.beta1) * g)
        write_data(var, self.beta2 * _raw(var) + (1.0 - self.beta2) * g * g)
        write_data(weight, w - lr * _raw(mean) / (xp.sqrt(_raw(var)) + self.epsilon))


@register
class AdaGrad(Optimizer):
    """AdaGrad (MXNet's dense update; the weight decay stays out of the history)::

        g = clip(rescale_grad * grad);  history += g**2
        weight -= lr * (g / sqrt(history + eps) + wd * weight)

    Args:
        eps: the term under the square root (default 1e-7).
    """

    def __init__(self, eps=1e-7, **kwargs) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return _zeros(weight)

    def update(self, index, weight, grad, state) -> None:
        lr, wd = self._begin(index, weight, grad)
        xp, w = _xp(weight), _raw(weight)
        g = _python_clip(self, xp, self.rescale_grad * _raw(grad))
        write_data(state, _raw(state) + g * g)
        div = g / xp.sqrt(_raw(state) + self.float_stable_eps)
        write_data(weight, w + (div + w * wd) * -lr)


@register
class RMSProp(Optimizer):
    """RMSProp as MXNet's `rmsprop_update` (Tieleman & Hinton) or, with `centered=True`,
    `rmspropalex_update` (Graves)::

        g = clip(rescale_grad * grad + wd * weight)
        n = (1 - gamma1) * g**2 + gamma1 * n
        weight -= lr * g / sqrt(n + epsilon)                      # centered=False
        gm = (1 - gamma1) * g + gamma1 * gm                       # centered=True
        delta = gamma2 * delta - lr * g / sqrt(n - gm**2 + epsilon);  weight += delta

    then the weight is clipped into `[-clip_weights, clip_weights]` when that is positive.

    Args:
        learning_rate: default 0.001. gamma1: the decay of the averages. gamma2: the
            momentum of `delta` (centered only). epsilon: default 1e-8.
        centered: Graves's version. clip_weights: bound of the weights (None: none).
    """

    def __init__(
        self,
        learning_rate=0.001,
        gamma1=0.9,
        gamma2=0.9,
        epsilon=1e-8,
        centered=False,
        clip_weights=None,
        **kwargs,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1, self.gamma2, self.epsilon = gamma1, gamma2, epsilon
        self.centered = centered
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        return tuple(_zeros(weight) for _ in range(3 if self.centered else 1))

    def update(self, index, weight, grad, state) -> None:
        lr, wd = self._begin(index, weight, grad)
        xp, w = _xp(weight), _raw(weight)
        g = _kernel_clip(self, xp, self.rescale_grad * _raw(grad) + wd * w)
        g1 = self.gamma1
        n = state[0]
        write_data(n, (1.0 - g1) * g * g + g1 * _raw(n))
        if not self.centered:
            new_w = w - lr * (g / xp.sqrt(_raw(n) + self.epsilon))
        else:
            _, gm, delta = state
            write_data(gm, (1.0 - g1) * g + g1 * _raw(gm))
            denom = xp.sqrt(_raw(n) - _raw(gm) * _raw(gm) + self.epsilon)
            write_data(delta, self.gamma2 * _raw(delta) - lr * g / denom)
            new_w = w + _raw(delta)
        cw = self.clip_weights
        if cw and cw >= 0:
            new_w = xp.clip(new_w, -cw, cw)
        write_data(weight, new_w)


@register
class AdaDelta(Optimizer):
    """AdaDelta (MXNet's update; it uses no learning rate)::

        g = clip(rescale_grad * grad)
        acc_g = rho * acc_g + (1 - rho) * g**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta**2
        weight -= delta + wd * weight

    Args:
        rho: the decay (default 0.9). epsilon: default 1e-5.
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rho, self.epsilon = rho, epsilon

    def create_state(self, index, weight):
        return (_zeros(weight), _zeros(weight))

    def update(self, index, weight, grad, state) -> None:
        _, wd = self._begin(index, weight, grad)
        xp, w = _xp(weight), _raw(weight)
        g = _python_clip(self, xp, self.rescale_grad * _raw(grad))
        acc_g, acc_delta = state
        rho, eps = self.rho, self.epsilon
        write_data(acc_g, rho * _raw(acc_g) + (1.0 - rho) * g * g)
        delta = xp.sqrt(_raw(acc_delta) + eps) / xp.sqrt(_raw(acc_g) + eps) * g
        write_data(acc_delta, rho * _raw(acc_delta) + (1.0 - rho) * delta * delta)
        write_data(weight, w - (delta + wd * w))


@register
class Adamax(Optimizer):
    """AdaMax, Adam on the infinity norm (MXNet's update)::

        g = clip(rescale_grad * grad + wd * weight)
        m = beta1 * m + (1 - beta1) * g;  u = maximum(beta2 * u, |g|)
        weight -= lr / (1 - beta1**t) * m / u

    Args:
        learning_rate: default 0.002. beta1, beta2: the decays.
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2 = beta1, beta2

    def create_state(self, index, weight):
        return (_zeros(weight, weight.dtype), _zeros(weight, weight.dtype))

    def update(self, index, weight, grad, state) -> None:
        lr, wd = self._begin(index, weight, grad)
        t = self._index_update_count[index]
        lr /= 1.0 - self.beta1**t
        xp, w = _xp(weight), _raw(weight)
        g = _python_clip(self, xp, self.rescale_grad * _raw(grad) + wd * w)
        m, u = state
        write_data(m, self.beta1 * _raw(m) + (1.0 - self.beta1) * g)
        write_data(u, xp.maximum(self.beta2 * _raw(u), xp.abs(g)))
        write_data(weight, w - lr * _raw(m) / _raw(u))


@register
class Nadam(Optimizer):
    """Adam with Nesterov momentum and MXNet's warming momentum schedule::

        g = clip(rescale_grad * grad + wd * weight)
        mu_t = beta1 * (1 - 0.5 * 0.96**(t * schedule_decay)), mu_t1 likewise at t + 1
        m_schedule *= mu_t   (one product over every update of the optimizer, as MXNet)
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g**2
        m_bar = (1 - mu_t) * g / (1 - m_schedule) + mu_t1 * m / (1 - m_schedule * mu_t1)
        weight -= lr * m_bar / (sqrt(v / (1 - beta2**t)) + epsilon)

    Args:
        learning_rate: default 0.001. beta1, beta2, epsilon: as Adam's.
        schedule_decay: the momentum schedule's decay (default 0.004).
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
        schedule_decay=0.004,
        **kwargs,
    ) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def create_state(self, index, weight):
        return (_zeros(weight, weight.dtype), _zeros(weight, weight.dtype))

    def update(self, index, weight, grad, state) -> None:
        lr, wd = self._begin(index, weight, grad)
        t = self._index_update_count[index]
        xp, w = _xp(weight), _raw(weight)
        g = _python_clip(self, xp, self.rescale_grad * _raw(grad) + wd * w)
        b1, b2, sd = self.beta1, self.beta2, self.schedule_decay
        mu_t = b1 * (1.0 - 0.5 * 0.96 ** (t * sd))
        mu_t1 = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * sd))
        self.m_schedule = self.m_schedule * mu_t
        m_schedule_next = self.m_schedule * mu_t1
        m, v = state
        write_data(m, b1 * _raw(m) + (1.0 - b1) * g)
        write_data(v, b2 * _raw(v) + (1.0 - b2) * g * g)
        g_prime = g / (1.0 - self.m_schedule)
        m_prime = _raw(m) / (1.0 - m_schedule_next)
        v_prime = _raw(v) / (1.0 - b2**t)
        m_bar = (1.0 - mu_t) * g_prime + mu_t1 * m_prime
        write_data(weight, w - lr * m_bar / (xp.sqrt(v_prime) + self.epsilon))


@register
class FTML(Optimizer):
    """Follow the Moving Leader (MXNet's `ftml_update`)::

        g = clip(rescale_grad * grad + wd * weight)
        v = beta2 * v + (1 - beta2) * g**2
        d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight;  d = d_t
        weight = -z / d_t

    Args:
        beta1: default 0.6. beta2: default 0.999. epsilon: default 1e-8.
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs) -> None:
        super().__init__(**kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index, weight):
        return tuple(_zeros(weight, weight.dtype) for _ in range(3))  # d, v, z

    def update(self, index, weight, grad, state) -> None:
        lr, wd = self._begin(index, weight, grad)
        t = self._index_update_count[index]
        xp, w = _xp(weight), _raw(weight)
        g = _kernel_clip(self, xp, self.rescale_grad * _raw(grad) + wd * w)
        b1, b2 = self.beta1, self.beta2
        d, v, z = state
        write_data(v, b2 * _raw(v) + (1.0 - b2) * g * g)
        d_t = (1.0 - b1**t) / lr * (xp.sqrt(_raw(v) / (1.0 - b2**t)) + self.epsilon)
        write_data(z, b1 * _raw(z) + (1.0 - b1) * g - (d_t - b1 * _raw(d)) * w)
        write_data(d, d_t)
        write_data(weight, -_raw(z) / d_t)


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (MXNet's `ftrl_update`)::

        g = clip(rescale_grad * grad)
        z += g - (sqrt(n + g**2) - sqrt(n)) * weight / lr;  n += g**2
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)

    Args:
        lamda1: the L1 coefficient (default 0.01). learning_rate: default 0.1.
        beta: default 1.
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lamda1, self.beta = lamda1, beta
        self.lr = learning_rate  # as MXNet: set after the base (a schedule's base_lr stays)

    def create_state(self, index, weight):
        return (_zeros(weight), _zeros(weight))  # z, n

    def update(self, index, weight, grad, state) -> None:
        lr, wd = self._begin(index, weight, grad)
        xp, w = _xp(weight), _raw(weight)
        g = _kernel_clip(self, xp, self.rescale_grad * _raw(grad))
        z, n = state
        sqrt_n = xp.sqrt(_raw(n))
        write_data(z, _raw(z) + g - (xp.sqrt(_raw(n) + g * g) - sqrt_n) * w / lr)
        write_data(n, _raw(n) + g * g)
        zr = _raw(z)
        new_w = (
            (xp.sign(zr) * self.lamda1 - zr)
            / ((self.beta + xp.sqrt(_raw(n))) / lr + wd)
            * (xp.abs(zr) > self.lamda1)
        )
        write_data(weight, new_w)
