"""ASGD (averaged stochastic gradient descent), PyTorch's update."""

from __future__ import annotations

import numpy as np

from .adadelta import plain_grad
from .optimizer import Array, Group, Optimizer, Params, ParamState

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky; Bottou's step schedule): SGD with a decaying step
    `eta_t = lr / (1 + lambd lr t) ** alpha`, keeping in state "ax" the running average of
    the iterates from step `t0` on.

    Args:
        params: parameters or parameter groups. lr (1e-2). lambd: decay term (1e-4).
        alpha: power of the eta update (0.75). t0: the step at which averaging starts (1e6).
        weight_decay: L2 penalty. maximize: ascend instead of descend.
        foreach: accepted for PyTorch's signature; the update runs one parameter at a time.

    >>> net = tg.nn.Linear(3, 1)
    >>> opt = tg.optim.ASGD(net.parameters(), lr=1e-2, t0=100)
    """

    _nonnegative = ("weight_decay",)

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(
        self, group: Group, params: list[Array], grads: list[Array], states: list[ParamState]
    ) -> None:
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        for p, g, st in zip(params, grads, states, strict=False):
            if not st:
                st["step"] = 0
                st["eta"] = float(lr)
                st["mu"] = 1.0
                st["ax"] = np.zeros_like(p)
            st["step"] += 1
            g = plain_grad(g, p, group, group["weight_decay"])
            eta = st["eta"]
            p *= 1 - lambd * eta
            p -= eta * g
            ax = st["ax"]
            if st["mu"] != 1:
                ax += st["mu"] * (p - ax)
            else:
                ax[...] = p
            st["eta"] = lr / (1 + lambd * lr * st["step"]) ** alpha
            st["mu"] = 1 / max(1, st["step"] - t0)
