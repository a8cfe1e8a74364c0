"""Adadelta, PyTorch's update."""

from __future__ import annotations

import numpy as np

from .optimizer import Array, Group, Optimizer, Params, ParamState

__all__ = ["Adadelta"]


def plain_grad(g: Array, p: Array, group: Group, weight_decay: float) -> Array:
    """The gradient the update uses: negated when `maximize`, plus the L2 term `wd * p`."""
    if group["maximize"]:
        g = -g
    if weight_decay:
        g = g + weight_decay * p
    return g


def adam_moments(
    g: Array, p: Array, st: ParamState, group: Group, decoupled: bool
) -> tuple[Array, Array, Array]:
    """The start of NAdam's and RAdam's step, shared so the two stay PyTorch's: weight decay
    (decoupled, AdamW's `p *= 1 - lr * wd`, or as the L2 term), then Adam's moment averages
    `exp_avg` and `exp_avg_sq` updated in place. Returns (gradient, exp_avg, exp_avg_sq)."""
    lr, wd, (b1, b2) = group["lr"], group["weight_decay"], group["betas"]
    if wd and decoupled:
        p *= 1 - lr * wd
    g = plain_grad(g, p, group, 0.0 if decoupled else wd)
    m, v = st["exp_avg"], st["exp_avg_sq"]
    m += (1 - b1) * (g - m)
    v *= b2
    v += (1 - b2) * (g * g)
    return g, m, v


class Adadelta(Optimizer):
    """Adadelta (Zeiler): steps scaled by the ratio of running RMS of updates and gradients.

    Args:
        params: parameters or parameter groups. lr: a factor on the step (1.0).
        rho: decay of the running averages (0.9). eps: inside both square roots (1e-6).
        weight_decay: L2 penalty. maximize: ascend instead of descend.
        foreach: accepted for PyTorch's signature; the update runs one parameter at a time.

    >>> net = tg.nn.Linear(3, 1)
    >>> opt = tg.optim.Adadelta(net.parameters(), rho=0.95)
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize
        )
        super().__init__(params, defaults)

    def _validate_group(self, group: Group) -> None:
        super()._validate_group(group)
        if not 0.0 <= group["rho"] <= 1.0:
            raise ValueError(f"Invalid rho value: {group['rho']}; it must be in [0, 1]")
        if group["eps"] < 0:
            raise ValueError(f"Invalid epsilon value: {group['eps']}; it must be >= 0")
        if group["weight_decay"] < 0:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}; must be >= 0")

    def _update(
        self, group: Group, params: list[Array], grads: list[Array], states: list[ParamState]
    ) -> None:
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for p, g, st in zip(params, grads, states, strict=False):
            if not st:
                st["step"] = 0
                st["square_avg"] = np.zeros_like(p)
                st["acc_delta"] = np.zeros_like(p)
            st["step"] += 1
            g = plain_grad(g, p, group, group["weight_decay"])
            sq, acc = st["square_avg"], st["acc_delta"]
            sq *= rho
            sq += (1 - rho) * (g * g)
            # out= keeps a 0-d parameter's temporaries arrays (NumPy returns scalars)
            delta = np.sqrt(acc + eps, out=np.empty_like(acc))
            delta /= np.sqrt(sq + eps)
            delta *= g
            acc *= rho
            acc += (1 - rho) * (delta * delta)
            delta *= lr
            p -= delta
