"""`mge.optimizer`: SGD, Adam, AdamW, Adagrad, Adadelta with MegEngine's chaining:
`opt.step().clear_grad()`.

SGD, Adam and AdamW are tapegrad.optim's (MegEngine's SGD, momentum and Adam updates are
PyTorch's); Adagrad and Adadelta make MegEngine's own updates (below).

    >>> model = mge.module.Linear(3, 1)
    >>> opt = mge.optimizer.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> opt.step().clear_grad()   # returns the optimizer, for chaining
    SGD (...)
"""

from __future__ import annotations

from ....optim import SGD as _SGD
from ....optim import Adam as _Adam
from ....optim import AdamW as _AdamW
from ....optim import Optimizer as _Optimizer
from ..._facade import facade_getattr

__all__ = [
    "SGD",
    "Adam",
    "AdamW",
    "Adagrad",
    "Adadelta",
    "Optimizer",
    "clip_grad_norm",
    "clip_grad_value",
]


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


# an Optimizer subclass so that its `super()` calls type-check; the MROs of SGD, Adam and
# AdamW below are what they were with a plain mixin (this class, the core class, Optimizer)
class _Chaining(_Optimizer):
    _MGE_OPTIONS: tuple = ("lr", "weight_decay")  # the group options MegEngine's state has

    def state_dict(self, keep_var=False) -> dict:
        """MegEngine's format: `{"param_groups": [{options..., "params": [ids]}], "state":
        {id: {name: np.ndarray}}}` (ids count parameters across groups; tensors with
        `keep_var=True`; Adam's `step` is a float array, as MegEngine's)."""
        import numpy as np

        from .._tensor import tensor

        core = super().state_dict()
        groups = [
            {**{k: g[k] for k in self._MGE_OPTIONS if k in g}, "params": g["params"]}
            for g in core["param_groups"]
        ]
        state = {}
        for i, st in core["state"].items():
            out = {}
            for name, v in st.items():
                arr = (
                    v.numpy()
                    if hasattr(v, "numpy")
                    else np.asarray(v, dtype=np.float32 if name == "step" else None)
                )
                out[name] = tensor(arr) if keep_var else arr
            state[i] = out
        return {"param_groups": groups, "state": state}

    def load_state_dict(self, state: dict) -> None:
        """Restore what `state_dict()` gave (MegEngine's format; arrays or tensors)."""
        import numpy as np

        fixed = {"param_groups": state.get("param_groups", []), "state": {}}
        for i, st in dict(state.get("state", {})).items():
            st = dict(st)
            if "step" in st:  # MegEngine keeps the step count as a float array
                st["step"] = int(
                    np.asarray(
                        st["step"].numpy() if hasattr(st["step"], "numpy") else st["step"]
                    ).item()
                )
            fixed["state"][i] = st
        super().load_state_dict(fixed)

    # MegEngine's step: no closure, returns the optimizer (PyTorch's returns the closure's loss)
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

    _MGE_OPTIONS = ("lr", "momentum", "nesterov", "weight_decay")

    def __init__(self, params, lr, momentum=0.0, nesterov=False, weight_decay=0.0) -> None:
        super().__init__(
            list(params), lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay
        )


class Adam(_Chaining, _Adam):
    """Adam(params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)."""

    _MGE_OPTIONS = ("lr", "betas", "eps", "weight_decay")

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0) -> None:
        super().__init__(list(params), lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


class AdamW(_Chaining, _AdamW):
    """AdamW(params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)."""

    _MGE_OPTIONS = ("lr", "betas", "eps", "weight_decay")

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2) -> None:
        super().__init__(list(params), lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


class Adagrad(_Chaining):
    """Adagrad(params, lr=0.01, lr_decay=0.0, eps=1e-10, weight_decay=0.0), MegEngine's
    update: `s += g**2; p -= lr / (1 + (step - 1) * lr_decay) * g / sqrt(s + eps)` (the
    epsilon inside the root, where PyTorch's adds it outside), `g` the gradient plus
    `weight_decay * p`."""

    _MGE_OPTIONS = ("lr", "lr_decay", "eps", "weight_decay")
    _nonnegative = ("lr_decay", "eps", "weight_decay")

    def __init__(self, params, lr=1e-2, lr_decay=0.0, eps=1e-10, weight_decay=0.0) -> None:
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay)
        super().__init__(list(params), defaults)

    def _update(self, group, params, grads, states) -> None:
        import numpy as np

        lr, decay, eps, wd = group["lr"], group["lr_decay"], group["eps"], group["weight_decay"]
        for p, g, st in zip(params, grads, states, strict=True):
            if not st:
                st["step"], st["square_avg"] = 0, np.zeros_like(p)
            st["step"] += 1
            g = g + wd * p if wd else g  # a new array: the gradient stays as backward wrote it
            st["square_avg"] += g * g
            clr = lr / (1 + (st["step"] - 1) * decay)
            p -= clr * g / np.sqrt(st["square_avg"] + eps)


class Adadelta(_Chaining):
    """Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0), MegEngine's update:
    `s = rho*s + (1-rho)*g**2; d = g * sqrt(a + eps) / sqrt(s + eps);
    a = rho*a + (1-rho)*d**2; p -= lr * d` (`g` the gradient plus `weight_decay * p`)."""

    _MGE_OPTIONS = ("lr", "rho", "eps", "weight_decay")
    _nonnegative = ("rho", "eps", "weight_decay")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0) -> None:
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Adadelta: rho must be in [0, 1], got {rho}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        super().__init__(list(params), defaults)

    def _update(self, group, params, grads, states) -> None:
        import numpy as np

        lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
        for p, g, st in zip(params, grads, states, strict=True):
            if not st:
                st["square_avg"], st["acc_delta"] = np.zeros_like(p), np.zeros_like(p)
            g = g + wd * p if wd else g
            s, a = st["square_avg"], st["acc_delta"]
            s *= rho
            s += (1 - rho) * g * g
            delta = g * np.sqrt(a + eps) / np.sqrt(s + eps)
            a *= rho
            a += (1 - rho) * delta * delta
            p -= lr * delta


Optimizer = _Chaining

__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (mge.optimizer)",
    {},
    {
        "LAMB": "not provided; use Adam or AdamW",
        "MultiStepLR": "not provided; set group['lr'] in opt.param_groups yourself",
    },
)
