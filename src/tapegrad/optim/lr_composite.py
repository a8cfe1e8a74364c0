"""Schedulers made of schedulers: SequentialLR (one after another, switching at
milestones) and ChainedScheduler (all of them every step). Exported from
`tg.optim.lr_scheduler`; the same sequences as PyTorch's."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from .lr_base import LRScheduler
from .optimizer import Optimizer

__all__ = ["SequentialLR", "ChainedScheduler"]


def _check_schedulers(
    who: str, schedulers: Sequence[Any], optimizer: Optimizer | None
) -> Optimizer:
    if not schedulers:
        raise ValueError(f"{who}: expected at least one scheduler, got none")
    optimizer = optimizer if optimizer is not None else schedulers[0].optimizer
    for i, s in enumerate(schedulers):
        if not isinstance(s, LRScheduler) or not hasattr(s, "base_lrs"):
            raise TypeError(
                f"{who}: scheduler {i} is a {type(s).__name__}; expected an epoch scheduler "
                "(ReduceLROnPlateau steps on a metric and cannot be sequenced)"
            )
        if s.optimizer is not optimizer:
            raise ValueError(
                f"{who}: scheduler {i} belongs to another optimizer than the others; build "
                "every scheduler on the same optimizer"
            )
    return optimizer


def _restart(s: LRScheduler) -> None:
    """Put `s` back at epoch 0 with the initial rates, as if just built (what PyTorch's
    closed form at epoch 0 gives)."""
    for group, lr in zip(s.optimizer.param_groups, s.base_lrs, strict=True):
        group["lr"] = lr
    s.last_epoch = -1
    s._is_initial = True
    s.step()
    s._is_initial = False


class SequentialLR(LRScheduler):
    """Run `schedulers[0]` until `milestones[0]`, then `schedulers[1]` from its start, ...:
    a warm-up followed by a decay, for instance.

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    >>> S = tg.optim.lr_scheduler
    >>> warmup = S.LinearLR(opt, start_factor=0.1, total_iters=5)
    >>> decay = S.CosineAnnealingLR(opt, T_max=20)
    >>> sched = S.SequentialLR(opt, [warmup, decay], milestones=[5])
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: Sequence[LRScheduler],
        milestones: Sequence[int],
        last_epoch: int = -1,
    ) -> None:
        _check_schedulers("SequentialLR", schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"SequentialLR: expected {len(schedulers) - 1} milestones (one fewer than the "
                f"schedulers), got {len(milestones)}"
            )
        self.optimizer = optimizer
        self._schedulers = list(schedulers)
        self._milestones = [int(m) for m in milestones]
        self.last_epoch = last_epoch + 1
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        # building each scheduler took a step: the first starts over, the others wait
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in self._schedulers:
            s.last_epoch -= 1
        _restart(self._schedulers[0])
        self._step_count = 1
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self) -> None:
        """Advance one epoch in the scheduler whose turn it is (from its start at a milestone)."""
        self._step_count += 1
        self.last_epoch += 1
        idx = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            _restart(scheduler)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """Its own counters and each scheduler's state."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what `state_dict()` returned."""
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        if len(inner) != len(self._schedulers):
            raise ValueError(
                f"SequentialLR.load_state_dict: the state has {len(inner)} schedulers, this "
                f"one {len(self._schedulers)}"
            )
        self.__dict__.update(state)
        for s, sd in zip(self._schedulers, inner, strict=True):
            s.load_state_dict(sd)


class ChainedScheduler(LRScheduler):
    """Step every scheduler in `schedulers` at each `step()`, in order: their factors
    multiply (a constant warm-up factor on top of an exponential decay, for instance).

    >>> opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=1.0)
    >>> S = tg.optim.lr_scheduler
    >>> warmup = S.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> sched = S.ChainedScheduler([warmup, S.ExponentialLR(opt, gamma=0.9)])
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> [round(lr, 4) for lr in lrs]
    [0.5, 0.45, 0.81, 0.729]
    """

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        self.optimizer = _check_schedulers("ChainedScheduler", schedulers, optimizer)
        self._schedulers = list(schedulers)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def step(self) -> None:
        """Step each scheduler once."""
        for s in self._schedulers:
            s.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Each scheduler's state."""
        return {"_schedulers": [s.state_dict() for s in self._schedulers]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what `state_dict()` returned."""
        inner = state_dict["_schedulers"]
        if len(inner) != len(self._schedulers):
            raise ValueError(
                f"ChainedScheduler.load_state_dict: the state has {len(inner)} schedulers, "
                f"this one {len(self._schedulers)}"
            )
        for s, sd in zip(self._schedulers, inner, strict=True):
            s.load_state_dict(sd)
