"""RMSprop (with momentum and the centered variant), PyTorch's update."""

from __future__ import annotations

import numpy as np

from .optimizer import Array, Group, Optimizer, Params, ParamState

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop: divide the gradient by a running root mean square of recent gradients.

    Args:
        params: parameters or parameter groups. lr (1e-2). alpha: smoothing constant (0.99).
        eps: added to the denominator. weight_decay: L2 penalty. momentum: momentum factor.
        centered: normalise by the estimated variance instead of the second moment.
        maximize: ascend instead of descend.

    >>> net = tg.nn.Linear(3, 1)
    >>> opt = tg.optim.RMSprop(net.parameters(), lr=1e-3, momentum=0.9)
    """

    _nonnegative = ("alpha", "eps", "weight_decay", "momentum")

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            centered=centered,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(
        self, group: Group, params: list[Array], grads: list[Array], states: list[ParamState]
    ) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
        for p, g, st in zip(params, grads, states, strict=False):
            if not st:
                st["step"] = 0
                st["square_avg"] = np.zeros_like(p)
                if momentum > 0:
                    st["momentum_buffer"] = np.zeros_like(p)
                if centered:
                    st["grad_avg"] = np.zeros_like(p)
            st["step"] += 1
            if group["maximize"]:
                g = -g
            if wd:
                g = g + wd * p
            sq = st["square_avg"]
            sq *= alpha
            tmp = g * g
            tmp *= 1 - alpha
            sq += tmp
            if centered:
                ga = st["grad_avg"]
                ga += (1 - alpha) * (g - ga)
                # out= keeps a 0-d parameter's temporaries arrays (NumPy returns scalars)
                avg = np.subtract(sq, ga * ga, out=np.empty_like(sq))
                np.sqrt(avg, out=avg)
            else:
                avg = np.sqrt(sq, out=np.empty_like(sq))
            avg += eps
            if momentum > 0:
                buf = st["momentum_buffer"]
                buf *= momentum
                buf += g / avg
                p -= lr * buf
            else:
                np.divide(g, avg, out=avg)
                avg *= lr
                p -= avg
