"""NAdam (Adam with Nesterov momentum), PyTorch's update."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .adadelta import adam_moments
from .optimizer import Array, Group, Optimizer, Params, ParamState, check_adam_options

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (Dozat): Adam whose first moment looks one step ahead, with momentum decay.

    Args:
        params: parameters or parameter groups. lr (2e-3). betas, eps: as Adam.
        weight_decay: L2 penalty, or decoupled (AdamW's `p *= 1 - lr * wd`) when
        `decoupled_weight_decay`. momentum_decay: psi in `mu_t = beta1 (1 - 0.96 ** (t psi) / 2)`
        (4e-3). maximize: ascend instead of descend.
        foreach: accepted for PyTorch's signature; the update runs one parameter at a time.

    >>> net = tg.nn.Linear(3, 1)
    >>> opt = tg.optim.NAdam(net.parameters(), lr=2e-3, momentum_decay=4e-3)
    """

    def __init__(
        self,
        params: Params,
        lr: float = 2e-3,
        betas: Iterable[float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
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
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _validate_group(self, group: Group) -> None:
        super()._validate_group(group)
        check_adam_options(group)
        if group["momentum_decay"] < 0:
            raise ValueError(
                f"Invalid momentum_decay value: {group['momentum_decay']}; it must be >= 0"
            )

    def _update(
        self, group: Group, params: list[Array], grads: list[Array], states: list[ParamState]
    ) -> None:
        lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
        psi, decoupled = group["momentum_decay"], group["decoupled_weight_decay"]
        for p, g, st in zip(params, grads, states, strict=False):
            if not st:
                st["step"] = 0
                st["mu_product"] = 1.0
                st["exp_avg"] = np.zeros_like(p)
                st["exp_avg_sq"] = np.zeros_like(p)
            st["step"] += 1
            t = st["step"]
            g, m, v = adam_moments(g, p, st, group, decoupled)
            mu = b1 * (1.0 - 0.5 * 0.96 ** (t * psi))
            mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
            st["mu_product"] *= mu
            mu_product = st["mu_product"]
            denom = np.sqrt(v / (1 - b2**t))
            denom += eps
            p -= (lr * (1.0 - mu) / (1.0 - mu_product)) * (g / denom)
            p -= (lr * mu_next / (1.0 - mu_product * mu_next)) * (m / denom)
