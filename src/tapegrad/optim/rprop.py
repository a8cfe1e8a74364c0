"""Rprop (resilient backpropagation), PyTorch's update."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .optimizer import Array, Group, Optimizer, Params, ParamState

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop: a step size per coordinate, grown while the gradient keeps its sign and shrunk
    (skipping that step) when it flips; only the sign of the gradient is used.

    Args:
        params: parameters or parameter groups. lr: the initial step size (1e-2).
        etas: (etaminus, etaplus), the factors that shrink and grow a step size, with
        0 < etaminus < 1 < etaplus. step_sizes: (min, max) step size. maximize: ascend.
        foreach: accepted for PyTorch's signature; the update runs one parameter at a time.

    >>> net = tg.nn.Linear(3, 1)
    >>> opt = tg.optim.Rprop(net.parameters(), lr=1e-2, etas=(0.5, 1.2))
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        etas: Iterable[float] = (0.5, 1.2),
        step_sizes: Iterable[float] = (1e-6, 50),
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            etas=tuple(etas),
            step_sizes=tuple(step_sizes),
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _validate_group(self, group: Group) -> None:
        super()._validate_group(group)
        etaminus, etaplus = group["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise ValueError(
                f"Invalid eta values: {etaminus}, {etaplus}; they must satisfy "
                "0 < etaminus < 1 < etaplus"
            )
        lo, hi = group["step_sizes"]
        if not 0.0 <= lo <= hi:
            raise ValueError(f"Invalid step_sizes: ({lo}, {hi}); they must satisfy 0 <= min <= max")

    def _update(
        self, group: Group, params: list[Array], grads: list[Array], states: list[ParamState]
    ) -> None:
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        for p, g, st in zip(params, grads, states, strict=False):
            if not st:
                st["step"] = 0
                st["prev"] = np.zeros_like(p)
                st["step_size"] = np.full_like(p, group["lr"])
            st["step"] += 1
            g = -g if group["maximize"] else g.copy()
            agreement = g * st["prev"]
            flipped = agreement < 0
            factor = np.where(agreement > 0, etaplus, np.where(flipped, etaminus, 1.0))
            size = st["step_size"]
            size *= factor
            np.clip(size, lo, hi, out=size)
            g[flipped] = 0  # after a sign flip: no step, and no flip counted next time
            p -= np.sign(g) * size
            st["prev"][...] = g
