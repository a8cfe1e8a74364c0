"""`mge.optimizer`: SGD, Adam, AdamW with MegEngine's chaining: `opt.step().clear_grad()`.

The updates are tapegrad.optim's (MegEngine's SGD, momentum and Adam updates are PyTorch's).

    >>> model = mge.module.Linear(3, 1)
    >>> opt = mge.optimizer.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> opt.step().clear_grad()   # returns the optimizer, for chaining
    SGD (...)
"""
from __future__ import annotations

from ....optim import SGD as _SGD
from ....optim import Adam as _Adam
from ....optim import AdamW as _AdamW
from ..._facade import facade_getattr

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "clip_grad_norm", "clip_grad_value"]


def clip_grad_norm(tensors, max_norm: float, ord: float = 2.0):  # noqa: A002
    """Scale the gradients of `tensors` so that their joint `ord`-norm is at most
    `max_norm`; returns the norm before clipping (an mge.Tensor)."""
    from ....nn.utils import clip_grad_norm_
    from .._tensor import tensor

    ts = [tensors] if hasattr(tensors, "grad") else list(tensors)
    total = clip_grad_norm_(ts, max_norm, norm_type=ord)
    return tensor(float(total))


def clip_grad_value(tensors, lower: float, upper: float) -> None:
    """Clip every gradient of `tensors` into [lower, upper], in place."""
    import numpy as np

    from ....tensor import write_data

    ts = [tensors] if hasattr(tensors, "grad") else list(tensors)
    for t in ts:
        if t.grad is not None:
            write_data(t.grad, np.clip(t.grad.numpy(), lower, upper))


class _Chaining:
    def step(self):
        """Update every parameter that has a gradient; returns the optimizer (chainable)."""
        super().step()
        return self

    def clear_grad(self):
        """Set every parameter's `.grad` to None; returns the optimizer."""
        self.zero_grad(set_to_none=True)
        return self


class SGD(_Chaining, _SGD):
    """SGD(params, lr, momentum=0.0, nesterov=False, weight_decay=0.0)."""

    def __init__(self, params, lr, momentum=0.0, nesterov=False, weight_decay=0.0) -> None:
        super().__init__(list(params), lr=lr, momentum=momentum, nesterov=nesterov,
                         weight_decay=weight_decay)


class Adam(_Chaining, _Adam):
    """Adam(params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)."""

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0) -> None:
        super().__init__(list(params), lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


class AdamW(_Chaining, _AdamW):
    """AdamW(params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)."""

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2) -> None:
        super().__init__(list(params), lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


Optimizer = _Chaining

__getattr__ = facade_getattr(__name__, "the MegEngine facade (mge.optimizer)", {}, {
    "LAMB": "not provided; use Adam or AdamW", "Adadelta": "not provided; use Adam",
    "Adagrad": "use tapegrad.optim.Adagrad directly",
    "MultiStepLR": "not provided; set group['lr'] in opt.param_groups yourself",
})
