"""Learning-rate schedulers: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LinearLR,
ConstantLR, PolynomialLR, LambdaLR, MultiplicativeLR, ReduceLROnPlateau; the cyclic ones
(optim/lr_cycles.py) and the combinations (optim/lr_composite.py) are exported here too.
Each computes the same sequence as its PyTorch namesake (the chainable form: every step
multiplies the current `group["lr"]`, so schedulers compose)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, SupportsFloat

from .lr_base import LRScheduler
from .lr_composite import ChainedScheduler, SequentialLR
from .lr_cycles import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "LinearLR",
    "ConstantLR",
    "PolynomialLR",
    "LambdaLR",
    "MultiplicativeLR",
    "ReduceLROnPlateau",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "CyclicLR",
    "SequentialLR",
    "ChainedScheduler",
]


class StepLR(LRScheduler):
    """Multiply the learning rate by `gamma` every `step_size` epochs.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        if int(step_size) <= 0:
            raise ValueError(f"StepLR: step_size must be a positive integer, got {step_size}")
        self.step_size = int(step_size)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by `gamma` at each epoch listed in `milestones`.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.MultiStepLR(opt, milestones=[30, 80], gamma=0.1)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(int(m) for m in milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        sd = super().state_dict()
        sd["milestones"] = {str(k): v for k, v in sd["milestones"].items()}  # JSON-safe
        return sd

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._current()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in self._current()]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by `gamma` every epoch.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95)
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class CosineAnnealingLR(LRScheduler):
    """Anneal the learning rate from its initial value to `eta_min` along a half cosine over
    `T_max` epochs (then back up, periodically, as PyTorch does without restarts).

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_max: int,  # noqa: N803
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if int(T_max) <= 0:
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive integer, got {T_max}")
        self.T_max = int(T_max)
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / t)) / 2 for b in self.base_lrs]
        if (e - 1 - t) % (2 * t) == 0:
            return [
                lr + (b - lo) * (1 - math.cos(math.pi / t)) / 2
                for lr, b in zip(self._current(), self.base_lrs, strict=False)
            ]
        ratio = (1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t))
        return [ratio * (lr - lo) + lo for lr in self._current()]


class LinearLR(LRScheduler):
    """Scale the learning rate linearly from `start_factor` to `end_factor` over
    `total_iters` epochs (a warm-up when start_factor < 1).

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=10)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = int(total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._current()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current()
        d = self.end_factor - self.start_factor
        factor = 1.0 + d / (self.total_iters * self.start_factor + (self.last_epoch - 1) * d)
        return [lr * factor for lr in self._current()]


class ConstantLR(LRScheduler):
    """Multiply the learning rate by `factor` for the first `total_iters` epochs, then give
    the initial rate back.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> [round(lr, 6) for lr in lrs]
    [0.05, 0.05, 0.1, 0.1]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be in [0, 1], got {factor}")
        self.factor = factor
        self.total_iters = int(total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current()]
        if self.last_epoch != self.total_iters:
            return self._current()
        return [lr / self.factor for lr in self._current()]


class PolynomialLR(LRScheduler):
    """Decay the learning rate as `(1 - epoch / total_iters) ** power` of its initial value,
    reaching 0 at `total_iters`.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        if int(total_iters) <= 0:
            raise ValueError(f"PolynomialLR: total_iters must be positive, got {total_iters}")
        self.total_iters = int(total_iters)
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e, t = self.last_epoch, self.total_iters
        if e == 0 or e > t:
            return self._current()
        factor = ((1.0 - e / t) / (1.0 - (e - 1) / t)) ** self.power
        return [lr * factor for lr in self._current()]


def _per_group_lambdas(
    who: str,
    optimizer: Optimizer,
    lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
) -> list[Callable[[int], float]]:
    """One function of the epoch per parameter group (one given for all, or a list)."""
    n = len(optimizer.param_groups)
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != n:
            raise ValueError(
                f"{who}: expected {n} lr_lambdas (one per parameter group), got {len(lr_lambda)}"
            )
        lambdas = list(lr_lambda)
    else:
        lambdas = [lr_lambda] * n
    if not all(callable(f) for f in lambdas):
        raise TypeError(f"{who}: lr_lambda must be a function of the epoch (or a list)")
    return lambdas


class LambdaLR(LRScheduler):
    """Set each group's learning rate to `initial_lr * lr_lambda(epoch)`; `lr_lambda` is a
    function or a list of functions, one per group. (The functions are not in state_dict.)

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.95 ** epoch)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.lr_lambdas = _per_group_lambdas("LambdaLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e = self.last_epoch
        return [b * f(e) for f, b in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class MultiplicativeLR(LRScheduler):
    """Multiply each group's learning rate by `lr_lambda(epoch)` at every step after the
    first; `lr_lambda` is a function or a list of functions, one per group.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.95)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.lr_lambdas = _per_group_lambdas("MultiplicativeLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch <= 0:
            return self._current()
        e = self.last_epoch
        return [lr * f(e) for f, lr in zip(self.lr_lambdas, self._current(), strict=True)]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rate by `factor` once a metric has stopped improving for
    `patience` epochs: call `step(metric)` after each evaluation.

    Args:
        mode: "min" (a loss) or "max" (an accuracy). factor: the multiplier (< 1).
        patience: epochs without improvement tolerated. threshold, threshold_mode ("rel" or
        "abs"): what counts as an improvement. cooldown: epochs to wait after a reduction.
        min_lr: a floor (one value or one per group). eps: smaller changes are skipped.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tg.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=3)
    >>> sched.step(0.93)  # after each epoch, with its validation accuracy
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | list[float] | tuple[float, ...] = 0.0,
        eps: float = 1e-8,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"ReduceLROnPlateau needs a tg.optim Optimizer, got {type(optimizer).__name__}"
            )
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor should be < 1.0, got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}"
            )
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"ReduceLROnPlateau: expected {n} min_lrs, got {len(min_lr)}")
            self.min_lrs = [float(x) for x in min_lr]
        else:
            self.min_lrs = [float(min_lr)] * n
        self.optimizer = optimizer
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = self._current()

    def _is_better(self, a: float) -> bool:
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < (self.best * (1 - self.threshold) if rel else self.best - self.threshold)
        return a > (self.best * (1 + self.threshold) if rel else self.best + self.threshold)

    def step(self, metrics: SupportsFloat) -> None:  # type: ignore[override]
        """Record this epoch's metric; lower the learning rates after `patience` bad epochs."""
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs, strict=True):
                old = float(group["lr"])
                new = max(old * self.factor, floor)
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current()
