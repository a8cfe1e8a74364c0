"""The base of the epoch schedulers (optim/lr_scheduler.py, lr_cycles.py, lr_composite.py):
it keeps each group's initial rate, counts epochs and writes `get_lr()` into the groups."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .optimizer import Optimizer

__all__ = ["LRScheduler"]


class LRScheduler:
    """Base class: call `step()` once per epoch (after `optimizer.step()`).

    Args:
        optimizer: the optimizer whose groups' "lr" it sets.
        last_epoch: -1 to start fresh; a checkpoint's epoch to resume (needs "initial_lr").
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"{type(self).__name__} needs a tg.optim Optimizer, got {type(optimizer).__name__}"
            )
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        f"a scheduler with last_epoch={last_epoch}; load the optimizer's state "
                        "dict first, or start with last_epoch=-1"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._is_initial = True
        self._step_count = 0
        self.step()
        self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rates for the current `last_epoch` (subclasses implement it)."""
        raise NotImplementedError

    def _current(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def step(self) -> None:
        """Advance one epoch and write the new learning rates into the optimizer."""
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=False):
            group["lr"] = lr
        self._last_lr = self._current()

    def get_last_lr(self) -> list[float]:
        """The learning rates the last `step()` set, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (and, for LambdaLR, the functions)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what `state_dict()` returned."""
        unknown = set(state_dict) - set(self.state_dict())
        if unknown:
            raise ValueError(
                f"{type(self).__name__}.load_state_dict: unexpected keys {sorted(unknown)}; is "
                "this the state of another kind of scheduler?"
            )
        state = dict(state_dict)
        if isinstance(state.get("milestones"), dict):
            state["milestones"] = Counter({int(k): v for k, v in state["milestones"].items()})
        self.__dict__.update(state)
