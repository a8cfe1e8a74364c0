"""`mx.lr_scheduler`: MXNet's learning-rate schedules, called with the update count.

A scheduler maps `num_update` (how many updates the optimizer has made, counted from 1 at
the first `trainer.step`) to a learning rate. `gluon.Trainer(..., {"lr_scheduler": s})`
sets `s.base_lr` to its `learning_rate` (as MXNet's optimizer does) and asks `s` for the
rate before every update; `trainer.learning_rate` is `s(num_update)`.

    >>> sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.1, base_lr=1.0)
    >>> [sched(n) for n in (1, 2, 3, 4, 5)]
    [1.0, 1.0, 0.1, 0.1, 0.01...]

`FactorScheduler` and `MultiFactorScheduler` keep state (the rate decays as the count passes
each boundary, so they are called with a count that does not go back), as in MXNet.
`PolyScheduler` and `CosineScheduler` are pure functions of the count and keep their last
rate after `max_update`.
"""

from __future__ import annotations

import math

__all__ = [
    "LRScheduler",
    "FactorScheduler",
    "MultiFactorScheduler",
    "PolyScheduler",
    "CosineScheduler",
]


class LRScheduler:
    """Base class: `base_lr`, and a warm-up over the first `warmup_steps` updates from
    `warmup_begin_lr` to `base_lr` (`warmup_mode` "linear", or "constant": stay at
    `warmup_begin_lr`)."""

    def __init__(
        self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"
    ) -> None:
        self.base_lr = base_lr
        if not isinstance(warmup_steps, int) or warmup_steps < 0:
            raise ValueError(
                f"{type(self).__name__}: warmup_steps must be an int >= 0, got {warmup_steps!r}"
            )
        if warmup_mode not in ("linear", "constant"):
            raise ValueError(
                f"{type(self).__name__}: warmup_mode must be 'linear' or 'constant', got "
                f"{warmup_mode!r}"
            )
        if warmup_begin_lr > base_lr:
            raise ValueError(
                f"{type(self).__name__}: warmup_begin_lr ({warmup_begin_lr}) must not exceed "
                f"base_lr ({base_lr})"
            )
        self.warmup_steps = warmup_steps
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_final_lr = base_lr
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update) -> float:
        """The rate at update `num_update` (< warmup_steps) of the warm-up."""
        if num_update >= self.warmup_steps:
            raise ValueError(
                f"{type(self).__name__}.get_warmup_lr: update {num_update} is past the "
                f"{self.warmup_steps} warm-up steps"
            )
        if self.warmup_mode == "constant":
            return self.warmup_begin_lr
        span = self.warmup_final_lr - self.warmup_begin_lr
        return self.warmup_begin_lr + span * num_update / self.warmup_steps

    def __call__(self, num_update) -> float:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(num_update)")


class FactorScheduler(LRScheduler):
    """Multiplies the rate by `factor` each time the count passes another `step` updates
    (after update `step`, `2 * step`, ...), never below `stop_factor_lr`."""

    def __init__(
        self,
        step,
        factor=1,
        stop_factor_lr=1e-8,
        base_lr=0.01,
        warmup_steps=0,
        warmup_begin_lr=0,
        warmup_mode="linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError(f"FactorScheduler: step must be >= 1 update, got {step}")
        if factor > 1.0:
            raise ValueError(f"FactorScheduler: factor must be <= 1 (a decay), got {factor}")
        self.step, self.factor, self.stop_factor_lr = step, factor, stop_factor_lr
        self.count = 0

    def __call__(self, num_update) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # a loop, not a formula: a count that jumps ahead (resumed training) decays as often
        # as the boundaries it passed
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr = max(self.base_lr * self.factor, self.stop_factor_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiplies the rate by `factor` once the count passes each entry of `step` (an
    increasing list of update counts)."""

    def __init__(
        self,
        step,
        factor=1,
        base_lr=0.01,
        warmup_steps=0,
        warmup_begin_lr=0,
        warmup_mode="linear",
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        step = list(step)
        if not step:
            raise ValueError("MultiFactorScheduler: step must list at least one update count")
        for i, s in enumerate(step):
            if i and s <= step[i - 1]:
                raise ValueError(
                    f"MultiFactorScheduler: step must be increasing, got {step} (entry {i})"
                )
            if s < 1:
                raise ValueError(f"MultiFactorScheduler: step entries must be >= 1, got {s}")
        if factor > 1.0:
            raise ValueError(f"MultiFactorScheduler: factor must be <= 1 (a decay), got {factor}")
        self.step, self.factor = step, factor
        self.cur_step_ind, self.count = 0, 0

    def __call__(self, num_update) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
        return self.base_lr


class _Annealed(LRScheduler):
    """A rate that goes from the constructor's `base_lr` to `final_lr` over the updates
    between the warm-up and `max_update`, along `_shape(fraction done)` (1 -> 0)."""

    def __init__(
        self, max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode
    ) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int) or max_update < 1:
            raise ValueError(
                f"{type(self).__name__}: max_update must be an int >= 1, got {max_update!r}"
            )
        self.max_update, self.final_lr = max_update, final_lr
        # the schedule's start is fixed here: a Trainer's later `base_lr = learning_rate`
        # moves only what the warm-up starts from, as in MXNet
        self.base_lr_orig = base_lr
        self.max_steps = max_update - warmup_steps

    def _shape(self, done: float) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, num_update) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            done = (num_update - self.warmup_steps) / self.max_steps
            span = self.base_lr_orig - self.final_lr
            self.base_lr = self.final_lr + span * self._shape(done)
        return self.base_lr


class PolyScheduler(_Annealed):
    """`final_lr + (base_lr - final_lr) * (1 - t) ** pwr`, t the fraction of the updates
    after the warm-up done by `max_update`."""

    def __init__(
        self,
        max_update,
        base_lr=0.01,
        pwr=2,
        final_lr=0,
        warmup_steps=0,
        warmup_begin_lr=0,
        warmup_mode="linear",
    ) -> None:
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.power = pwr

    def _shape(self, done: float) -> float:
        return (1.0 - done) ** self.power


class CosineScheduler(_Annealed):
    """`final_lr + (base_lr - final_lr) * (1 + cos(pi * t)) / 2`, t as in PolyScheduler."""

    def __init__(
        self,
        max_update,
        base_lr=0.01,
        final_lr=0,
        warmup_steps=0,
        warmup_begin_lr=0,
        warmup_mode="linear",
    ) -> None:
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode)

    def _shape(self, done: float) -> float:
        return (1.0 + math.cos(math.pi * done)) / 2.0
