"""Adamax, PyTorch's update."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .adadelta import plain_grad
from .optimizer import Array, Group, Optimizer, Params, ParamState, check_adam_options

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (Kingma & Ba): Adam with the infinity norm in place of the second moment.

    Args:
        params: parameters or parameter groups. lr (2e-3). betas: decay rates of the first
        moment and of the infinity norm. eps: added to |g| before the maximum (1e-8).
        weight_decay: L2 penalty. maximize: ascend instead of descend.
        foreach: accepted for PyTorch's signature; the update runs one parameter at a time.

    >>> net = tg.nn.Linear(3, 1)
    >>> opt = tg.optim.Adamax(net.parameters(), lr=2e-3)
    """

    def __init__(
        self,
        params: Params,
        lr: float = 2e-3,
        betas: Iterable[float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
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
        for p, g, st in zip(params, grads, states, strict=False):
            if not st:
                st["step"] = 0
                st["exp_avg"] = np.zeros_like(p)
                st["exp_inf"] = np.zeros_like(p)
            st["step"] += 1
            g = plain_grad(g, p, group, group["weight_decay"])
            m, u = st["exp_avg"], st["exp_inf"]
            m += (1 - b1) * (g - m)
            u *= b2
            np.maximum(u, np.abs(g) + eps, out=u)
            clr = lr / (1 - b1 ** st["step"])
            p -= clr * (m / u)
