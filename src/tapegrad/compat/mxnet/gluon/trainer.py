"""`mx.gluon.Trainer`: MXNet's update rule on tapegrad's optimizers, or on `mx.optimizer`.

"sgd", "nag" and "adam" given by name run on tapegrad.optim (below). Any other registered
name, and any `mx.optimizer.Optimizer` object, runs MXNet's own Trainer loop: the object
(its `param_dict` the Trainer's parameters, `rescale_grad` set to scale / batch_size at
each step) updates each parameter with a fresh gradient through an `mx.optimizer.Updater`.

For the three names, the update is `tapegrad.optim.SGD` / `Adam` with options that say
where MXNet differs from PyTorch: `grad_scale` (`rescale_grad / batch_size`),
`clip_value` (`clip_gradient`), `clip_after_decay` (Adam adds the weight decay before
clipping), `eps_before_correction` (Adam's epsilon) and `lr_in_momentum` (SGD's momentum
buffer holds `lr * grad`). Parameter gradients are left as backward wrote them (MXNet
rescales inside its update kernels too), and with `grad_req="write"` there is nothing to
zero between steps.

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
    from ..optimizer import Optimizer as MXOptimizer

__all__ = ["Trainer"]

# given by name, these run on tapegrad.optim (one fused update for all parameters)
_FAST = ("sgd", "nag", "adam")
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
        optimizer: a name registered in `mx.optimizer` ("sgd", "nag", "adam", "rmsprop",
            "adagrad", ...) or an `mx.optimizer.Optimizer` object. "sgd", "nag" and "adam"
            by name run on tapegrad.optim (MXNet's update as its options); every other
            name, and any object, runs the object's `update_multi_precision` per parameter.
        optimizer_params: MXNet's options, for a name: `learning_rate` (default 0.01,
            Adam 0.001), `wd`, `momentum` (sgd/nag), `beta1`, `beta2`, `epsilon` (adam),
            `clip_gradient`, `rescale_grad`, `lr_scheduler`, and each optimizer's own.
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
        self._params = params
        self._opt: Optimizer | None = None  # made at the first step, when deferred parameters exist
        # an mx.optimizer object and its Updater, for every optimizer but sgd/nag/adam by name
        self._object: MXOptimizer | None = None
        if not (isinstance(optimizer, str) and optimizer.lower() in _FAST):
            self._init_object(optimizer, optimizer_params)
            return
        self._name = optimizer.lower()
        opts = dict(optimizer_params or {})
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
        self._scheduler = opts.get("lr_scheduler")
        if self._scheduler is not None:
            if not callable(self._scheduler):
                raise TypeError(
                    "Trainer: lr_scheduler must be an mx.lr_scheduler object (called with the "
                    f"update count), got {type(self._scheduler).__name__}"
                )
            # as MXNet's optimizer: the schedule starts from the Trainer's learning rate
            self._scheduler.base_lr = self._lr
        # updates made so far (MXNet's num_update): what the scheduler is asked about
        self._num_update = int(opts.get("begin_num_update", 0))
        self._opts = opts

    def _init_object(self, optimizer, optimizer_params) -> None:
        """The general path (MXNet's own Trainer): an `mx.optimizer` object whose
        `param_dict` is this Trainer's parameters by index, updated per parameter by an
        `Updater` with `rescale_grad = scale / batch_size`."""
        from ..optimizer import Optimizer as MXOptimizer
        from ..optimizer import Updater, create

        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, MXOptimizer):
            if optimizer_params:
                raise ValueError(
                    "Trainer: optimizer_params must be None if optimizer is an instance of "
                    "mx.optimizer.Optimizer instead of str (give the options to the optimizer)"
                )
            optimizer.param_dict = param_dict
            obj = optimizer
        elif isinstance(optimizer, str):
            if optimizer.lower() not in MXOptimizer.opt_registry:
                raise ValueError(
                    f"Trainer: unknown optimizer {optimizer!r}; known: "
                    f"{sorted(MXOptimizer.opt_registry)} (or pass an mx.optimizer object)"
                )
            obj = create(optimizer, param_dict=param_dict, **dict(optimizer_params or {}))
        else:
            raise TypeError(
                "Trainer: optimizer must be a name ('sgd', 'adam', 'rmsprop', ...) or an "
                f"mx.optimizer.Optimizer, got {type(optimizer).__name__}"
            )
        self._name = type(obj).__name__.lower()
        self._object = obj
        self._updater = Updater(obj)
        self._scale = float(obj.rescale_grad)

    @property
    def learning_rate(self) -> float:
        """The current rate: the scheduler's at the current update count, when there is one."""
        if self._object is not None:
            return self._object.learning_rate
        if self._scheduler is not None:
            return float(self._scheduler(self._num_update))
        return self._lr

    def set_learning_rate(self, lr) -> None:
        """Set the rate (refused with an lr_scheduler, which owns the rate, as in MXNet)."""
        if self._object is not None:
            self._object.set_learning_rate(lr)
            return
        if self._scheduler is not None:
            raise UserWarning(
                "Trainer.set_learning_rate: this Trainer has an lr_scheduler, which sets the "
                "learning rate at every update; change the scheduler (or make the Trainer "
                "without one) instead"
            )
        self._lr = float(lr)
        if self._opt is not None:
            for p, group in zip(self._params, self._opt.param_groups, strict=True):
                group["lr"] = self._lr * p.lr_mult

    @property
    def optimizer(self):
        """The `mx.optimizer` object; for sgd / nag / adam by name, the tapegrad.optim
        optimizer that runs the update (made at the first step)."""
        return self._object if self._object is not None else self._opt

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
        """The update of `step`; a parameter without a gradient (grad_req "null") is skipped.

        As in MXNet, every parameter's gradient must have been written by a backward since
        the last update: a stale one raises (nothing is updated), or with
        `ignore_stale_grad=True` that parameter is left as it is (its momentum too).
        """
        stale = [p for p in self._params if p.grad_req != "null" and not p._grad_written.fresh]
        if stale and not ignore_stale_grad:
            names = ", ".join(repr(p.name) for p in stale)
            raise UserWarning(
                f"Trainer.step: the gradient of Parameter(s) {names} has not been updated by "
                "backward since the last step (the model used only some of its parameters this "
                "iteration?); nothing was updated. If that is intended, call "
                "step(batch_size, ignore_stale_grad=True) to skip the stale ones"
            )
        if self._object is not None:
            self._update_object(batch_size, stale)
            return
        opt = self._opt if self._opt is not None else self._make_optimizer()
        self._num_update += 1
        lr = self._scheduler(self._num_update) if self._scheduler is not None else self._lr
        for p, group in zip(self._params, opt.param_groups, strict=True):
            self._follow(opt, p, group)
            # read at every update, as MXNet does: lr_mult / wd_mult may change between steps
            group["lr"] = float(lr) * p.lr_mult
            group["lr_mult"] = p.lr_mult
            group["weight_decay"] = self._wd * p.wd_mult
            group["grad_scale"] = self._scale / batch_size
        skipped = [p._var for p in stale if p._var is not None]
        held = [v.grad for v in skipped]
        for v in skipped:  # the core optimizer leaves a parameter without a gradient alone
            v.grad = None
        try:
            opt.step()
        finally:
            for v, g in zip(skipped, held, strict=True):
                v.grad = g
        for p in self._params:
            if p not in stale:
                p._grad_written.fresh = False

    def _update_object(self, batch_size, stale: list) -> None:
        """MXNet's Trainer._update: each parameter with a fresh gradient through the
        Updater (its state made at the parameter's first update)."""
        assert self._object is not None
        self._object.rescale_grad = self._scale / batch_size
        for i, p in enumerate(self._params):
            if p.grad_req == "null" or any(p is q for q in stale):
                continue
            self._updater(i, p.grad(), p.data())
            p._grad_written.fresh = False

    @staticmethod
    def _follow(opt: Optimizer, p: Parameter, group: dict) -> None:
        """Point `group` at the parameter's current array: `initialize(force_reinit=True)`,
        `cast` or `reset_ctx` give a Parameter a new one, which the updates must reach (its
        optimizer state moves along when the shape is unchanged)."""
        cur = p.data()
        old = group["params"][0]
        if old is cur:
            return
        st = opt.state.pop(old, None)
        if st is not None and old.shape == cur.shape:
            opt.state[cur] = {
                k: (v.astype(cur.dtype) if hasattr(v, "astype") and getattr(v, "ndim", None) else v)
                for k, v in st.items()
            }
        group["params"] = [cur]
        opt._flat_cache, opt._flat_scratch = {}, {}  # they may hold the old array's state

    def save_states(self, fname) -> None:
        """Save the optimizer states (and, for an optimizer object, the object itself:
        MXNet's pickle of the Updater's states; the Parameters are not saved)."""
        if self._object is not None:
            with open(fname, "wb") as f:
                f.write(self._updater.get_states(dump_optimizer=True))
            return
        from .... import io

        io.save(self._opt.state_dict() if self._opt else {}, fname)

    def load_states(self, fname) -> None:
        """Load what `save_states` wrote; the optimizer's `param_dict` is this Trainer's."""
        if self._object is not None:
            with open(fname, "rb") as f:
                self._updater.set_states(f.read())
            self._object = self._updater.optimizer
            self._object.param_dict = dict(enumerate(self._params))
            return
        from .... import io

        opt = self._opt if self._opt is not None else self._make_optimizer()
        opt.load_state_dict(io.load(fname))
