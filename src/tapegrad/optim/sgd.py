"""SGD with momentum, dampening, Nesterov momentum and weight decay (PyTorch's update)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .flat import FlatChunk
from .optimizer import (
    GRAD_OPTIONS,
    Array,
    Group,
    Optimizer,
    Params,
    ParamState,
    prepare_grad,
    required,
    validate_grad_options,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, the update PyTorch's `torch.optim.SGD` makes.

    Args:
        params: parameters or parameter groups.
        lr: learning rate.
        momentum: momentum factor (0 = none).
        dampening: dampening of the momentum.
        weight_decay: L2 penalty added to the gradient.
        nesterov: Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: ascend instead of descend.
        lr_in_momentum: the momentum buffer accumulates `lr * gradient` and the step is the
            buffer (MXNet's and Caffe's form: a learning-rate change affects only new
            gradients); PyTorch's buffer accumulates gradients and the step is `lr * buffer`.
            The two are the same while the learning rate is constant.
        foreach: None or True (default: the small parameters of a group are updated together,
            a few NumPy calls for all of them, see `tapegrad.optim.flat`), False (one
            parameter at a time). Both give the same result, bit for bit.
        grad_scale, clip_value, clip_after_decay: what the update does to the gradient first
            (see `tapegrad.optim.optimizer.prepare_grad`); the defaults change nothing.

    >>> net, loss_fn = tg.nn.Linear(3, 1), tg.nn.MSELoss()
    >>> x, y = tg.randn(8, 3), tg.randn(8, 1)
    >>> opt = tg.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    >>> opt.zero_grad(); loss_fn(net(x), y).backward(); opt.step()
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        lr_in_momentum: bool = False,
        foreach: bool | None = None,
        **grad_options: Any,
    ) -> None:
        if lr is required:
            raise ValueError("SGD needs a learning rate: SGD(params, lr=0.01)")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            lr_in_momentum=lr_in_momentum,
            foreach=foreach,
            **_grad_options("SGD", grad_options),
        )
        super().__init__(params, defaults)

    def _validate_group(self, group: Group) -> None:
        super()._validate_group(group)
        if group["momentum"] < 0:
            raise ValueError(f"Invalid momentum value: {group['momentum']}; it must be >= 0")
        if group["weight_decay"] < 0:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}; must be >= 0")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum > 0 and zero dampening")
        validate_grad_options(group)

    def _update(
        self, group: Group, params: list[Array], grads: list[Array], states: list[ParamState]
    ) -> None:
        lr, momentum, wd = group["lr"], group["momentum"], group["weight_decay"]
        plain = (
            not momentum
            and not wd
            and group.get("grad_scale", 1.0) == 1.0
            and group.get("clip_value") is None
        )
        for p, g, st in zip(params, grads, states, strict=False):
            if plain:
                # the hot path: exactly the cost of `p -= lr * g` in NumPy
                if group["maximize"]:
                    p += lr * g
                else:
                    p -= lr * g
                continue
            g = prepare_grad(g, p, group, wd)
            if not momentum:
                p -= lr * g
                continue
            buf = st.get("momentum_buffer")
            fresh = buf is None
            if buf is None:
                buf = st["momentum_buffer"] = np.empty_like(g)
            p -= _momentum_direction(group, g, buf, fresh)

    # the multi-tensor path (flat.py): the same NumPy calls on one chunk's flat buffers
    def _flat_pays(self, group: Group) -> bool:
        # plain SGD is two NumPy calls a parameter (`p -= lr * g`); gathering the gradients
        # saves one of them but costs a copy, a loss from a few thousand elements on
        return bool(
            group["momentum"]
            or group["weight_decay"]
            or group.get("grad_scale", 1.0) != 1.0
            or group.get("clip_value") is not None
        )

    def _bucket_key(self, group: Group, state: ParamState) -> bool:
        return group["momentum"] and state.get("momentum_buffer") is None  # a first step?

    def _flat_names(self, group: Group) -> tuple[str, ...]:
        return ("momentum_buffer",) if group["momentum"] else ()

    def _update_flat(
        self,
        group: Group,
        chunk: FlatChunk,
        params: list[Array],
        grads: list[Array],
        states: list[ParamState],
        fresh: bool,
    ) -> None:
        wd = group["weight_decay"]
        flat_p = np.concatenate(params, axis=None) if wd else None
        g = prepare_grad(chunk.gather_grads(grads), flat_p, group, wd)
        if group["momentum"]:
            buf = chunk.buffers["momentum_buffer"]
            _momentum_direction(group, g, buf, fresh, chunk.work, chunk.scratch())
        else:
            np.multiply(g, group["lr"], out=chunk.work)
        chunk.subtract_work(params)


def _momentum_direction(
    group: Group,
    g: Array,
    buf: Array,
    fresh: bool,
    out: Array | None = None,
    tmp: Array | None = None,
) -> Array:
    """Update the momentum buffer in place (fill it when `fresh`); return what to subtract
    from the parameter (in `out` when given: `g` may be `out`; `tmp`: an array to compute
    in)."""
    lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
    lr_inside = group.get("lr_in_momentum", False)
    step_g = np.multiply(g, lr, out=out) if lr_inside else g  # what the buffer accumulates
    if fresh:
        np.copyto(buf, step_g)
    else:
        buf *= momentum
        buf += np.multiply(step_g, 1 - dampening, out=tmp) if dampening else step_g
    if group["nesterov"]:
        step = np.add(step_g, np.multiply(buf, momentum, out=tmp), out=out)
    else:
        step = buf
    if lr_inside:
        if out is not None and step is not out:
            np.copyto(out, step)
            return out
        return step
    return np.multiply(step, lr, out=out)


def _grad_options(who: str, given: dict[str, Any]) -> dict[str, Any]:
    """The `prepare_grad` options, defaults filled in; a TypeError for an unknown keyword."""
    unknown = sorted(set(given) - set(GRAD_OPTIONS))
    if unknown:
        raise TypeError(
            f"{who}: unexpected keyword arguments {unknown}; the gradient options "
            f"are {sorted(GRAD_OPTIONS)}"
        )
    return {**GRAD_OPTIONS, **given}
