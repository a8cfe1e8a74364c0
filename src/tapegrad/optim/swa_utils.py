"""tg.optim.swa_utils: stochastic weight averaging (Izmailov et al., 2018) and exponential
moving averages of a model's weights, PyTorch's API.

`AveragedModel(model)` keeps a copy whose parameters are the running average of the
model's (`update_parameters(model)` after each step or epoch; an `avg_fn` or
`multi_avg_fn`, e.g. `get_ema_multi_avg_fn(0.999)`, for another average); `SWALR` anneals
each group's learning rate to a constant `swa_lr`; `update_bn(loader, averaged)` recomputes
the BatchNorm statistics for the averaged weights, which no batch has seen.

    >>> model = tg.nn.Linear(4, 2)
    >>> swa = tg.optim.swa_utils.AveragedModel(model)
    >>> opt = tg.optim.SGD(model.parameters(), lr=0.1)
    >>> sched = tg.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=2)
    >>> for _ in range(3):
    ...     model(tg.randn(8, 4)).square().mean().backward()
    ...     opt.step(); opt.zero_grad(); swa.update_parameters(model); sched.step()
    >>> int(swa.n_averaged)
    3
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .. import creation
from ..autograd.modes import no_grad
from ..nn.layers import _BatchNorm
from ..nn.module import Module
from ..tensor import Tensor
from .lr_base import LRScheduler
from .optimizer import Optimizer

__all__ = [
    "AveragedModel",
    "SWALR",
    "update_bn",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

AvgFn = Callable[[Tensor, Tensor, Tensor | int], Tensor]
MultiAvgFn = Callable[[list[Tensor], list[Tensor], Tensor | int], None]


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """avg_fn of an exponential moving average: decay * average + (1 - decay) * current."""

    def ema_update(averaged: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        return decay * averaged + (1 - decay) * current

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """avg_fn of the equal-weight average (SWA's, the default)."""

    def swa_update(averaged: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        return averaged + (current - averaged) / (_count(num_averaged) + 1)

    return swa_update


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """multi_avg_fn of an exponential moving average, updating the averages in place."""

    def ema_update(averaged: list[Tensor], current: list[Tensor], num_averaged: Any) -> None:
        for a, c in zip(averaged, current, strict=True):
            a.copy_(decay * a + (1 - decay) * c)

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """multi_avg_fn of the equal-weight average, updating the averages in place."""

    def swa_update(averaged: list[Tensor], current: list[Tensor], num_averaged: Any) -> None:
        n = _count(num_averaged)
        for a, c in zip(averaged, current, strict=True):
            a.copy_(a + (c - a) / (n + 1))

    return swa_update


def _count(n: Any) -> float:
    return float(n.item() if isinstance(n, Tensor) else n)


class AveragedModel(Module):
    """A copy of `model` whose parameters (and buffers, with `use_buffers`) are averaged
    over the models passed to `update_parameters`; calling it runs the copy.

    avg_fn(averaged, current, n_averaged) -> new average, or multi_avg_fn(averaged list,
    current list, n_averaged) updating in place; neither: the equal-weight average.
    Without `use_buffers` the buffers (BatchNorm statistics) are copied from the latest
    model instead (recompute them with `update_bn`)."""

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: AvgFn | None = None,
        multi_avg_fn: MultiAvgFn | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(model, Module):
            raise TypeError(f"AveragedModel: expected an nn.Module, got {type(model).__name__}")
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("AveragedModel: pass avg_fn or multi_avg_fn, not both")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)  # type: ignore[no-untyped-call]
        self.register_buffer("n_averaged", creation.tensor(0, device=device or "cpu"))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> list[Tensor]:
        own = model.parameters()
        return list(itertools.chain(own, model.buffers()) if self.use_buffers else own)

    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current weights into the average (the first call copies them)."""
        mine, theirs = self._tensors(self.module), self._tensors(model)
        if len(mine) != len(theirs):
            raise ValueError(
                f"AveragedModel.update_parameters: the model has {len(theirs)} tensors to "
                f"average, the averaged copy {len(mine)}; pass the model it was made from"
            )
        n = self.n_averaged
        with no_grad():
            current = [t.detach().to(a.device) for a, t in zip(mine, theirs)]
            averaged = [a.detach() for a in mine]
            if int(n.item()) == 0:
                for a, c in zip(averaged, current):
                    a.copy_(c)
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn(averaged, current, n)
            else:
                avg_fn = self.avg_fn or get_swa_avg_fn()
                for a, c in zip(averaged, current):
                    a.copy_(avg_fn(a, c, n))
            if not self.use_buffers:  # the statistics follow the latest model
                for a, b in zip(self.module.buffers(), model.buffers()):
                    a.detach().copy_(b.detach().to(a.device))
            self.n_averaged.copy_(n + 1)


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every BatchNorm's running statistics of `model` over one pass of `loader`
    (batches, or (input, ...) tuples whose first item is the input), as a cumulative
    average; the model's training mode is restored after."""
    momenta: dict[_BatchNorm, Any] = {}
    for module in model.modules():  # type: ignore[no-untyped-call]
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None  # a cumulative average over the pass
    for batch in loader:
        x = batch[0] if isinstance(batch, (list, tuple)) else batch
        if device is not None:
            x = x.to(device)
        model(x)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to `swa_lr` (a float, or one per group) over
    `anneal_epochs` steps, by a cosine or a linear ramp, then hold it."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | Sequence[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        groups = optimizer.param_groups if isinstance(optimizer, Optimizer) else []
        lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(groups)
        if len(lrs) != len(groups):
            raise ValueError(
                f"SWALR: swa_lr has {len(lrs)} values for the optimizer's {len(groups)} "
                "parameter groups"
            )
        for group, lr in zip(groups, lrs):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"SWALR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}"
            )
        if (
            not isinstance(anneal_epochs, int)
            or isinstance(anneal_epochs, bool)
            or anneal_epochs < 0
        ):
            raise ValueError(f"SWALR: anneal_epochs must be an int >= 0, got {anneal_epochs!r}")
        self.anneal_func = _cos_ramp if anneal_strategy == "cos" else _linear_ramp
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        # the rate the ramp would give now, from the rate that its previous point implies
        # the group started from (so a rate changed by hand meanwhile is taken into account)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0.0, min(1.0, (step - 1) / span)))
        alpha = self.anneal_func(max(0.0, min(1.0, step / span)))
        out = []
        for group in self.optimizer.param_groups:
            swa = group["swa_lr"]
            start = swa if prev_alpha == 1 else (group["lr"] - prev_alpha * swa) / (1 - prev_alpha)
            out.append(swa * alpha + start * (1 - alpha))
        return out

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state.pop("anneal_func", None)  # a function: rebuilt from the strategy on load
        state["anneal_strategy"] = "cos" if self.anneal_func is _cos_ramp else "linear"
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        strategy = state.pop("anneal_strategy", "cos")
        super().load_state_dict(state)
        self.anneal_func = _cos_ramp if strategy == "cos" else _linear_ramp


def _cos_ramp(t: float) -> float:
    return (1 - math.cos(math.pi * t)) / 2


def _linear_ramp(t: float) -> float:
    return t
