"""Adam and AdamW (with AMSGrad), PyTorch's updates."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from .flat import FlatChunk
from .optimizer import (
    Array,
    Group,
    Optimizer,
    Params,
    ParamState,
    check_adam_options,
    prepare_grad,
    validate_grad_options,
)
from .sgd import _grad_options

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma & Ba), with optional AMSGrad and L2 weight decay, as PyTorch computes it.

    Args:
        params: parameters or parameter groups.
        lr: step size (1e-3).
        betas: decay rates of the first and second moment averages.
        eps: added to the denominator.
        weight_decay: L2 penalty (added to the gradient; see AdamW for the decoupled form).
        amsgrad: keep the running maximum of the second moment.
        maximize: ascend instead of descend.
        eps_before_correction: add `eps` to `sqrt(v)` before dividing by the bias correction
            `sqrt(1 - beta2**t)` (MXNet's and TensorFlow's form, the paper's "epsilon hat"):
            PyTorch adds it after, so early steps differ by a factor of that correction.
        foreach: None or True (default: the small parameters of a group are updated together,
            a few NumPy calls for all of them, see `tapegrad.optim.flat`), False (one
            parameter at a time). Both give the same result, bit for bit.
        grad_scale, clip_value, clip_after_decay: what the update does to the gradient first
            (see `tapegrad.optim.optimizer.prepare_grad`); the defaults change nothing.

    >>> net = tg.nn.Linear(3, 1)
    >>> opt = tg.optim.Adam(net.parameters(), lr=1e-3)
    """

    _decoupled = False

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        betas: Iterable[float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        eps_before_correction: bool = False,
        foreach: bool | None = None,
        **grad_options: Any,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            eps_before_correction=eps_before_correction,
            foreach=foreach,
            **_grad_options(type(self).__name__, grad_options),
        )
        super().__init__(params, defaults)

    def _validate_group(self, group: Group) -> None:
        super()._validate_group(group)
        check_adam_options(group)
        validate_grad_options(group)

    def _update(
        self, group: Group, params: list[Array], grads: list[Array], states: list[ParamState]
    ) -> None:
        lr, wd = group["lr"], group["weight_decay"]
        decoupled = wd and self._decoupled
        for p, g, st in zip(params, grads, states, strict=False):
            if not st:
                st["step"] = 0
                for name in self._flat_names(group):
                    st[name] = np.zeros_like(p)
            st["step"] += 1
            if decoupled:
                p *= 1 - lr * wd
            g = prepare_grad(g, p, group, 0.0 if self._decoupled else wd)
            vmax = st.get("max_exp_avg_sq") if group["amsgrad"] else None
            if group["amsgrad"] and vmax is None:  # amsgrad switched on after the first steps
                vmax = st["max_exp_avg_sq"] = np.zeros_like(p)
            p -= _adam_direction(group, g, st["exp_avg"], st["exp_avg_sq"], vmax, st["step"])

    # the multi-tensor path (flat.py): the same NumPy calls on one chunk's flat buffers
    def _bucket_key(self, group: Group, state: ParamState) -> Any:
        return state.get("step", 0)  # the bias corrections depend on it

    def _flat_names(self, group: Group) -> tuple[str, ...]:
        if group["amsgrad"]:
            return ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
        return ("exp_avg", "exp_avg_sq")

    def _update_flat(
        self,
        group: Group,
        chunk: FlatChunk,
        params: list[Array],
        grads: list[Array],
        states: list[ParamState],
        step: int,
    ) -> None:
        lr, wd = group["lr"], group["weight_decay"]
        decoupled = wd and self._decoupled
        step += 1
        # None when wd is 0: then nothing reads it (`decoupled` implies wd)
        flat_p: Any = np.concatenate(params, axis=None) if wd else None
        if decoupled:
            flat_p *= 1 - lr * wd
        g = prepare_grad(chunk.gather_grads(grads), flat_p, group, 0.0 if self._decoupled else wd)
        b = chunk.buffers
        m, v, vmax = b["exp_avg"], b["exp_avg_sq"], b.get("max_exp_avg_sq")
        direction = _adam_direction(group, g, m, v, vmax, step, chunk.work, chunk.scratch())
        for st in states:
            st["step"] = step
        if decoupled:
            np.subtract(flat_p, direction, out=chunk.work)
            chunk.copy_work(params)
        else:
            chunk.subtract_work(params)


def _adam_direction(
    group: Group,
    g: Array,
    m: Array,
    v: Array,
    vmax: Array | None,
    step: int,
    out: Array | None = None,
    tmp: Array | None = None,
) -> Array:
    """Update the moments in place; return what to subtract from the parameter (in `out`
    when given: `g` may be `out`, it is read only before `out` is written; `tmp`: an array
    to compute in)."""
    lr, eps = group["lr"], group["eps"]
    beta1, beta2 = group["betas"]
    if out is None:  # (not `g - m`: on a 0-d parameter that would be a NumPy scalar)
        out, tmp = np.empty_like(m), np.empty_like(m)
    tmp = np.subtract(g, m, out=tmp)  # one scratch array serves both moment updates
    tmp *= 1 - beta1
    m += tmp  # m.lerp_(g, 1 - beta1)
    np.multiply(g, g, out=tmp)
    tmp *= 1 - beta2
    v *= beta2
    v += tmp
    step_size = lr / (1 - beta1**step)
    bc2_sqrt = math.sqrt(1 - beta2**step)
    if vmax is not None:
        np.maximum(vmax, v, out=vmax)
        v = vmax
    denom = np.sqrt(v, out=out)
    if group.get("eps_before_correction", False):
        denom += eps
        denom /= bc2_sqrt
    else:
        denom /= bc2_sqrt
        denom += eps
    np.divide(m, denom, out=denom)
    denom *= step_size
    return denom


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): `p *= 1 - lr * weight_decay`
    before the Adam step. Same arguments as `Adam`; weight_decay defaults to 1e-2.

    >>> net = tg.nn.Linear(3, 1)
    >>> opt = tg.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-2)
    """

    _decoupled = True

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        betas: Iterable[float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        eps_before_correction: bool = False,
        foreach: bool | None = None,
        **grad_options: Any,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            eps_before_correction=eps_before_correction,
            foreach=foreach,
            **grad_options,
        )
