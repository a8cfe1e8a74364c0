"""`mx.gluon.Trainer`: MXNet's update rule on tapegrad's optimizers.

`step(batch_size)` rescales every gradient by `1 / batch_size` (MXNet's `rescale_grad`),
clips it (`clip_gradient`), adds the weight decay where MXNet adds it, and hands the
result to `tapegrad.optim.SGD` / `Adam` for the update itself. Parameter gradients are left
as backward wrote them (MXNet does the rescaling inside its update kernels too), and with
`grad_req="write"` there is nothing to zero between steps.

    >>> net, loss_fn = mx.gluon.nn.Dense(1), mx.gluon.loss.L2Loss()
    >>> net.initialize()
    >>> x, y = mx.np.ones((4, 3)), mx.np.zeros((4, 1))
    >>> trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    >>> with mx.autograd.record():
    ...     loss = loss_fn(net(x), y)
    >>> loss.backward()
    >>> trainer.step(batch_size=x.shape[0])
"""
from __future__ import annotations

import numpy as np

from ....tensor import _wrap
from .parameter import Parameter

__all__ = ["Trainer"]

# MXNet option -> (tapegrad option, default)
_SGD = {"momentum": ("momentum", 0.0)}
_ADAM = {"beta1": None, "beta2": None, "epsilon": ("eps", 1e-8)}
_COMMON = ("learning_rate", "wd", "rescale_grad", "clip_gradient", "lr_scheduler",
           "multi_precision", "param_dict", "begin_num_update", "lazy_update")


class Trainer:
    """Applies an optimizer to a set of Gluon Parameters.

    Args:
        params: `net.collect_params()` (a dict), or a list of Parameters.
        optimizer: "sgd", "nag" or "adam".
        optimizer_params: MXNet's options: `learning_rate` (default 0.01, Adam 0.001), `wd`,
            `momentum` (sgd/nag), `beta1`, `beta2`, `epsilon` (adam), `clip_gradient`,
            `rescale_grad`.
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None) -> None:
        if isinstance(params, dict):
            params = list(params.values())
        unique = {}
        for p in params:  # a parameter shared by two blocks is updated once
            unique.setdefault(id(p), p)
        params = list(unique.values())
        for i, p in enumerate(params):
            if not isinstance(p, Parameter):
                raise TypeError(
                    f"Trainer: params must be Gluon Parameters (net.collect_params()), item {i} "
                    f"is a {type(p).__name__}"
                )
        if not isinstance(optimizer, str):
            raise TypeError(
                "Trainer: pass the optimizer by name ('sgd', 'nag' or 'adam') with its options "
                "in optimizer_params; optimizer objects are not supported by the MXNet facade"
            )
        self._params = params
        self._name = optimizer.lower()
        opts = dict(optimizer_params or {})
        if self._name not in ("sgd", "nag", "adam"):
            raise ValueError(
                f"Trainer: optimizer {optimizer!r} is not supported by the MXNet facade; use "
                "'sgd', 'nag' or 'adam' (or tapegrad.optim directly)"
            )
        known = set(_COMMON) | set(_SGD if self._name != "adam" else _ADAM)
        unknown = sorted(set(opts) - known)
        if unknown:
            raise ValueError(
                f"Trainer: unknown {self._name} options {unknown}; known: {sorted(known)}"
            )
        self._lr = float(opts.get("learning_rate", 0.001 if self._name == "adam" else 0.01))
        self._wd = float(opts.get("wd", 0.0))
        self._scale = float(opts.get("rescale_grad", 1.0))
        self._clip = opts.get("clip_gradient")
        self._opts = opts
        self._opt = None  # made at the first step, when deferred parameters exist
        self._t = 0  # updates made (Adam's bias correction)

    @property
    def learning_rate(self) -> float:
        return self._lr

    def set_learning_rate(self, lr) -> None:
        self._lr = float(lr)
        if self._opt is not None:
            for group in self._opt.param_groups:
                group["lr"] = self._lr * group["_lr_mult"]

    @property
    def optimizer(self):
        return self._opt

    def _make_optimizer(self) -> None:
        from .... import optim

        groups = []
        for p in self._params:
            var = p.data()
            groups.append({"params": [var], "lr": self._lr * p.lr_mult, "_lr_mult": p.lr_mult})
        if self._name == "adam":
            betas = (float(self._opts.get("beta1", 0.9)), float(self._opts.get("beta2", 0.999)))
            self._opt = optim.Adam(groups, lr=self._lr, betas=betas,
                                   eps=float(self._opts.get("epsilon", 1e-8)))
        else:
            self._opt = optim.SGD(groups, lr=self._lr,
                                  momentum=float(self._opts.get("momentum", 0.0)),
                                  nesterov=self._name == "nag"
                                  and float(self._opts.get("momentum", 0.0)) > 0)

    def allreduce_grads(self) -> None:
        """One process, one device: nothing to reduce (see tapegrad.distributed)."""

    def step(self, batch_size, ignore_stale_grad=False) -> None:
        """One update of every parameter with gradients scaled by `rescale_grad / batch_size`."""
        self.update(batch_size, ignore_stale_grad)

    def update(self, batch_size, ignore_stale_grad=False) -> None:
        if self._opt is None:
            self._make_optimizer()
        scale = self._scale / batch_size
        # MXNet's order: rescale, clip, then weight decay (Adam: weight decay before clip)
        swapped = []
        for p in self._params:
            if p.grad_req == "null":
                continue
            var = p.data()
            g = var._grad
            if g is None:
                continue
            arr = g._data * scale
            wd = self._wd * p.wd_mult
            if self._name == "adam" and wd:
                arr = arr + wd * var._data
            if self._clip is not None and self._clip > 0:
                np.clip(arr, -self._clip, self._clip, out=arr)
            if self._name != "adam" and wd:
                arr = arr + wd * var._data
            swapped.append((var, g))
            var._grad = _wrap(arr)
        try:
            frozen = [(v, v._grad) for group in self._opt.param_groups for v in group["params"]
                      if not any(v is s for s, _ in swapped)]
            for v, _ in frozen:  # parameters without a fresh gradient are not updated
                v._grad = None
            self._t += 1
            if self._name == "adam":
                # MXNet adds epsilon to sqrt(v) before the bias correction, PyTorch after it:
                # epsilon / sqrt(1 - beta2**t) makes tapegrad's Adam take MXNet's step exactly
                eps = float(self._opts.get("epsilon", 1e-8))
                for group in self._opt.param_groups:
                    group["eps"] = eps / float(np.sqrt(1.0 - group["betas"][1] ** self._t))
            self._opt.step()
        finally:
            for v, g in frozen:
                v._grad = g
            for var, g in swapped:
                var._grad = g

    def save_states(self, fname) -> None:
        from .... import io

        io.save(self._opt.state_dict() if self._opt else {}, fname)

    def load_states(self, fname) -> None:
        from .... import io

        if self._opt is None:
            self._make_optimizer()
        self._opt.load_state_dict(io.load(fname))
