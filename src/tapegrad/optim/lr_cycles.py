"""Cyclic learning-rate schedulers: CosineAnnealingWarmRestarts, OneCycleLR, CyclicLR.

Each computes the same sequence as its PyTorch namesake from the closed forms in PyTorch's
documentation (these three are not chainable there either: each step sets the rate from
the epoch, not from the previous rate). OneCycleLR and CyclicLR also cycle the momentum
(SGD's `momentum`, or beta1 of Adam-style optimizers) unless `cycle_momentum=False`.
Exported from `tg.optim.lr_scheduler`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .lr_base import LRScheduler
from .optimizer import Optimizer

__all__ = ["CosineAnnealingWarmRestarts", "OneCycleLR", "CyclicLR"]


def _per_group(
    name: str, value: float | Sequence[float], optimizer: Optimizer, who: str
) -> list[float]:
    n = len(optimizer.param_groups)
    if not isinstance(value, (int, float)):
        if len(value) != n:
            raise ValueError(
                f"{who}: expected {n} values of {name} (one per group), got {len(value)}"
            )
        return [float(v) for v in value]
    return [float(value)] * n


def _momentum_key(optimizer: Optimizer, who: str) -> str:
    """Which group entry a momentum cycle writes: "momentum", or "betas" (its first value)."""
    if "momentum" in optimizer.defaults:
        return "momentum"
    if "betas" in optimizer.defaults:
        return "betas"
    raise ValueError(
        f"{who}: optimizer must support momentum or beta1 with `cycle_momentum` option "
        "enabled; pass cycle_momentum=False"
    )


def _set_momentum(group: dict[str, Any], key: str, value: float) -> None:
    if key == "betas":
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial rate to `eta_min` over `T_0` epochs, then a restart;
    each period is `T_mult` times the one before. `step(epoch)` takes a fractional epoch
    (`epoch + batch / batches_per_epoch`) to anneal within an epoch.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,  # noqa: N803
        T_mult: int = 1,  # noqa: N803
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(
                f"CosineAnnealingWarmRestarts: expected a positive integer T_0, got {T_0!r}"
            )
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(
                f"CosineAnnealingWarmRestarts: expected an integer T_mult >= 1, got {T_mult!r}"
            )
        self.T_0, self.T_i, self.T_mult = T_0, T_0, T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        cos = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (b - self.eta_min) * cos for b in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or jump to `epoch` (which may be fractional)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(
                    f"CosineAnnealingWarmRestarts.step: expected epoch >= 0, got {epoch}"
                )
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:  # which period `epoch` falls in: the periods' lengths sum geometrically
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self._step_count += 1
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            group["lr"] = lr
        self._last_lr = self._current()


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the rate rises from `max_lr / div_factor` to `max_lr` over the first
    `pct_start` of `total_steps`, then falls to `initial / final_div_factor` (with
    `three_phase`, back to the initial rate first); the momentum moves the other way between
    `max_momentum` and `base_momentum`. Call `step()` after every batch.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> sched = tg.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=100)
    >>> round(sched.get_last_lr()[0], 6), opt.param_groups[0]["momentum"]
    (0.04, 0.95)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | Sequence[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | Sequence[float] = 0.85,
        max_momentum: float | Sequence[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        who = "OneCycleLR"
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(
                    f"{who}: expected a positive integer total_steps, got {total_steps!r}"
                )
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"{who}: expected a positive integer epochs, got {epochs!r}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"{who}: expected a positive integer steps_per_epoch, got {steps_per_epoch!r}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError(
                f"{who}: you must define either total_steps or (epochs and steps_per_epoch)"
            )
        if not 0 <= pct_start <= 1 or not isinstance(pct_start, (int, float)):
            raise ValueError(
                f"{who}: expected a float between 0 and 1 for pct_start, got {pct_start!r}"
            )
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"{who}: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}"
            )
        self.anneal_strategy = anneal_strategy
        t = float(self.total_steps)
        if three_phase:
            # (last step of the phase, group key it starts from, group key it ends at)
            self._phases = [
                (pct_start * t - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (2 * pct_start * t - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (t - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._phases = [
                (pct_start * t - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (t - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        max_lrs = _per_group("max_lr", max_lr, optimizer, who)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs, strict=True):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._momentum = _momentum_key(optimizer, who)
            if last_epoch == -1:
                lows = _per_group("base_momentum", base_momentum, optimizer, who)
                highs = _per_group("max_momentum", max_momentum, optimizer, who)
                for group, low, high in zip(optimizer.param_groups, lows, highs, strict=True):
                    _set_momentum(group, self._momentum, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"OneCycleLR: tried to step {step} times; the specified number of total steps "
                f"is {self.total_steps} (make total_steps, or epochs * steps_per_epoch, cover "
                "every call to step())"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, (end_step, lr_from, lr_to, m_from, m_to) in enumerate(self._phases):
                if step <= end_step or i == len(self._phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        m = self._anneal(group[m_from], group[m_to], pct)
                        _set_momentum(group, self._momentum, m)
                    break
                start_step = end_step
        return lrs


class CyclicLR(LRScheduler):
    """Cycle the rate between `base_lr` and `max_lr` (`step_size_up` batches up,
    `step_size_down` down), with the "triangular", "triangular2" (halved amplitude each
    cycle) or "exp_range" (amplitude `gamma ** batch`) policy, or your `scale_fn`; the
    momentum cycles the other way. Call `step()` after every batch.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> sched = tg.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | Sequence[float],
        max_lr: float | Sequence[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float | Sequence[float] = 0.8,
        max_momentum: float | Sequence[float] = 0.9,
        last_epoch: int = -1,
    ) -> None:
        who = "CyclicLR"
        base_lrs = _per_group("base_lr", base_lr, optimizer, who)
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, base_lrs, strict=True):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", max_lr, optimizer, who)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        if up <= 0 or down <= 0:
            raise ValueError(f"{who}: step sizes must be positive, got up={up}, down={down}")
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(
                f"{who}: mode must be triangular, triangular2 or exp_range, got {mode!r}"
            )
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(
                f"{who}: scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}"
            )
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = (
            scale_mode
            if scale_fn is not None
            else ("iterations" if mode == "exp_range" else "cycle")
        )
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._momentum = _momentum_key(optimizer, who)
            self.base_momentums = _per_group("base_momentum", base_momentum, optimizer, who)
            self.max_momentums = _per_group("max_momentum", max_momentum, optimizer, who)
            if last_epoch == -1:
                for group, high in zip(optimizer.param_groups, self.max_momentums, strict=True):
                    _set_momentum(group, self._momentum, high)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _scale(self, x: float) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return float(1 / (2.0 ** (x - 1)))
        return float(self.gamma**x)

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        amplitude = self._scale(cycle if self.scale_mode == "cycle" else self.last_epoch)
        base_lrs = getattr(self, "base_lrs", [g["lr"] for g in self.optimizer.param_groups])
        lrs = [
            b + (top - b) * scale_factor * amplitude
            for b, top in zip(base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            pairs = zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums, strict=True
            )
            for group, low, high in pairs:
                _set_momentum(group, self._momentum, high - (high - low) * scale_factor * amplitude)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """As LRScheduler's, without a custom `scale_fn` (a function)."""
        return {k: v for k, v in super().state_dict().items() if k != "_scale_fn_custom"}
