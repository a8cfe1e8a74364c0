"""`mx.gluon.Trainer`: MXNet's update rule on tapegrad's optimizers.

The update is `tapegrad.optim.SGD` / `Adam` with options that say where MXNet differs from
PyTorch: `grad_scale` (`rescale_grad / batch_size`), `clip_value` (`clip_gradient`),
`clip_after_decay` (Adam adds the weight decay before clipping), `eps_before_correction`
(Adam's epsilon) and `lr_in_momentum` (SGD's momentum buffer holds `lr * grad`). Parameter
gradients are left as backward wrote them (MXNet rescales inside its update kernels too),
and with `grad_req="write"` there is nothing to zero between steps.

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

from typing import TYPE_CHECKING, Any

from .parameter import Parameter

if TYPE_CHECKING:  # tapegrad.optim loads at the first step
    from ....optim import Optimizer

__all__ = ["Trainer"]

# MXNet option -> (tapegrad option, default)
_SGD = {"momentum": ("momentum", 0.0)}
_ADAM = {"beta1": None, "beta2": None, "epsilon": ("eps", 1e-8)}
_COMMON = (
    "learning_rate",
    "wd",
    "rescale_grad",
    "clip_gradient",
    "lr_scheduler",
    "multi_precision",
    "param_dict",
    "begin_num_update",
    "lazy_update",
)


class Trainer:
    """Applies an optimizer to a set of Gluon Parameters.

    Args:
        params: `net.collect_params()` (a dict), or a list of Parameters.
        optimizer: "sgd", "nag" or "adam".
        optimizer_params: MXNet's options: `learning_rate` (default 0.01, Adam 0.001), `wd`,
            `momentum` (sgd/nag), `beta1`, `beta2`, `epsilon` (adam), `clip_gradient`,
            `rescale_grad`.
    """

    def __init__(
        self,
        params,
        optimizer,
        optimizer_params=None,
        kvstore="device",
        compression_params=None,
        update_on_kvstore=None,
    ) -> None:
        if isinstance(params, dict):
            params = list(params.values())
        unique: dict[int, Parameter] = {}
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
        self._opt: Optimizer | None = None  # made at the first step, when deferred parameters exist

    @property
    def learning_rate(self) -> float:
        return self._lr

    def set_learning_rate(self, lr) -> None:
        self._lr = float(lr)
        if self._opt is not None:
            for group in self._opt.param_groups:
                group["lr"] = self._lr * group["lr_mult"]

    @property
    def optimizer(self):
        return self._opt

    def _make_optimizer(self) -> Optimizer:
        """The core optimizer with MXNet's update expressed as its options: one parameter
        group per parameter (its lr_mult and wd_mult), `grad_scale` (rescale_grad / batch
        size, set at each step), `clip_value` (clip_gradient), and MXNet's placements:
        Adam's weight decay before the clipping and its epsilon before the bias correction,
        SGD's learning rate inside the momentum. Returns it (also kept as `_opt`)."""
        from .... import optim

        clip = self._clip if self._clip is not None and self._clip > 0 else None
        groups = [
            {
                "params": [p.data()],
                "lr": self._lr * p.lr_mult,
                "lr_mult": p.lr_mult,
                "weight_decay": self._wd * p.wd_mult,
            }
            for p in self._params
        ]
        # lr and the gradient options, as keywords (so typed Any: each has its own type)
        common: dict[str, Any] = dict(lr=self._lr, grad_scale=self._scale, clip_value=clip)
        if self._name == "adam":
            betas = (float(self._opts.get("beta1", 0.9)), float(self._opts.get("beta2", 0.999)))
            opt: Optimizer = optim.Adam(
                groups,
                betas=betas,
                eps=float(self._opts.get("epsilon", 1e-8)),
                eps_before_correction=True,
                clip_after_decay=True,
                **common,
            )
        else:
            momentum = float(self._opts.get("momentum", 0.0))
            opt = optim.SGD(
                groups,
                momentum=momentum,
                lr_in_momentum=True,
                nesterov=self._name == "nag" and momentum > 0,
                **common,
            )
        self._opt = opt
        return opt

    def allreduce_grads(self) -> None:
        """One process, one device: nothing to reduce (see tapegrad.distributed)."""

    def step(self, batch_size, ignore_stale_grad=False) -> None:
        """One update of every parameter with gradients scaled by `rescale_grad / batch_size`."""
        self.update(batch_size, ignore_stale_grad)

    def update(self, batch_size, ignore_stale_grad=False) -> None:
        """The update of `step`; a parameter without a gradient (grad_req "null") is skipped."""
        opt = self._opt if self._opt is not None else self._make_optimizer()
        for group in opt.param_groups:
            group["grad_scale"] = self._scale / batch_size
        opt.step()

    def save_states(self, fname) -> None:
        from .... import io

        io.save(self._opt.state_dict() if self._opt else {}, fname)

    def load_states(self, fname) -> None:
        from .... import io

        opt = self._opt if self._opt is not None else self._make_optimizer()
        opt.load_state_dict(io.load(fname))
