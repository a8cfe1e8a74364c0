"""RAdam (rectified Adam), PyTorch's update."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .adadelta import adam_moments
from .optimizer import Array, Group, Optimizer, Params, ParamState, check_adam_options

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (Liu et al.): Adam whose adaptive step is switched on, and rectified, once the
    variance of its second moment estimate is tractable (rho_t > 5); SGD with momentum before.

    Args:
        params: parameters or parameter groups. lr (1e-3). betas, eps: as Adam.
        weight_decay: L2 penalty, or decoupled (AdamW's `p *= 1 - lr * wd`) when
        `decoupled_weight_decay`. maximize: ascend instead of descend.
        foreach: accepted for PyTorch's signature; the update runs one parameter at a time.

    >>> net = tg.nn.Linear(3, 1)
    >>> opt = tg.optim.RAdam(net.parameters(), lr=1e-3, decoupled_weight_decay=True)
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        betas: Iterable[float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _validate_group(self, group: Group) -> None:
        super()._validate_group(group)
        check_adam_options(group)

    def _update(
        self, group: Group, params: list[Array], grads: list[Array], states: list[ParamState]
    ) -> None:
        lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
        decoupled = group["decoupled_weight_decay"]
        rho_inf = 2 / (1 - b2) - 1
        for p, g, st in zip(params, grads, states, strict=False):
            if not st:
                st["step"] = 0
                st["exp_avg"] = np.zeros_like(p)
                st["exp_avg_sq"] = np.zeros_like(p)
            st["step"] += 1
            t = st["step"]
            _, m, v = adam_moments(g, p, st, group, decoupled)
            correction2 = 1 - b2**t
            m_hat = m / (1 - b1**t)
            rho_t = rho_inf - 2 * t * b2**t / correction2
            if rho_t > 5:
                rect = math.sqrt(
                    (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                )
                root = np.sqrt(v, out=np.empty_like(v))
                root += eps
                p -= m_hat * lr * (math.sqrt(correction2) / root) * rect
            else:
                p -= m_hat * lr
