"""Adagrad, PyTorch's update."""

from __future__ import annotations

from typing import Any

import numpy as np

from .optimizer import Array, Group, Optimizer, Params, ParamState

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad: per-coordinate steps scaled by the root of the summed squared gradients.

    Args:
        params: parameters or parameter groups. lr (1e-2). lr_decay: the step size is
        `lr / (1 + (step - 1) * lr_decay)`. weight_decay: L2 penalty.
        initial_accumulator_value: start of the sum. eps: added to the denominator (1e-10).
        maximize: ascend instead of descend.

    >>> net = tg.nn.Linear(3, 1)
    >>> opt = tg.optim.Adagrad(net.parameters(), lr=0.1)
    """

    _nonnegative = ("lr_decay", "weight_decay", "initial_accumulator_value", "eps")

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group; its sums start at `initial_accumulator_value` at once (as PyTorch)."""
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        for p in group["params"]:
            self.state.setdefault(
                p,
                {
                    "step": 0,
                    "sum": np.full_like(p._data, group["initial_accumulator_value"]),
                },
            )

    def _update(
        self, group: Group, params: list[Array], grads: list[Array], states: list[ParamState]
    ) -> None:
        lr, lr_decay, wd, eps = group["lr"], group["lr_decay"], group["weight_decay"], group["eps"]
        for p, g, st in zip(params, grads, states, strict=False):
            if not st:
                st["step"] = 0
                st["sum"] = np.full_like(p, group["initial_accumulator_value"])
            st["step"] += 1
            if group["maximize"]:
                g = -g
            if wd:
                g = g + wd * p
            clr = lr / (1 + (st["step"] - 1) * lr_decay)
            s = st["sum"]
            s += g * g
            # out= keeps a 0-d parameter's `std` an array: NumPy returns a scalar otherwise
            std = np.sqrt(s, out=np.empty_like(s))
            std += eps
            np.divide(g, std, out=std)
            std *= clr
            p -= std
