"""`mx.optimizer.Optimizer`: MXNet 1.9's optimizer base class, its registry and Updater.

An optimizer object holds the options every rule shares (`learning_rate` or an
`lr_scheduler`, `wd`, `rescale_grad`, `clip_gradient`, per-parameter `lr_mult` / `wd_mult`)
and counts updates per parameter index (`_index_update_count`, `num_update`, what the
schedule and the bias corrections are asked about). `update(index, weight, grad, state)`
writes the new weight in place, outside any recorded graph, as MXNet's update operators do.

    >>> opt = mx.optimizer.create("sgd", learning_rate=0.5, momentum=0.9)
    >>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    >>> state = opt.create_state(0, w)
    >>> opt.update(0, w, g, state); w.asnumpy(), opt.num_update
    (array([0.5, 0.5], dtype=float32), 1)
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ....tensor import Tensor, as_class, write_data

__all__ = ["Optimizer", "register", "create", "Updater", "get_updater"]


class Optimizer:
    """The base class of every optimizer (MXNet 1.9.1's signature and bookkeeping).

    Args:
        rescale_grad: the gradient is multiplied by this first (`gluon.Trainer` sets it to
            its scale / batch_size at every step).
        param_idx2name: index -> parameter name; names not ending in `_weight` / `_gamma`
            get weight decay 0 (MXNet's rule).
        wd: weight decay (L2) coefficient.
        clip_gradient: clip the (rescaled) gradient into `[-clip_gradient, clip_gradient]`.
        learning_rate: the rate (default 0.01); with an `lr_scheduler` it becomes the
            schedule's `base_lr`.
        lr_scheduler: an `mx.lr_scheduler` object, asked for the rate at `num_update`.
        sym: must be None (symbols are not provided by the facade).
        begin_num_update: the update count to start from.
        multi_precision: keep a float32 master copy of float16 weights.
        param_dict: index -> Gluon Parameter (their `lr_mult` / `wd_mult` are read at
            every update); `gluon.Trainer` sets it.
    """

    opt_registry: dict[str, type[Optimizer]] = {}

    def __init__(
        self,
        rescale_grad=1.0,
        param_idx2name=None,
        wd=0.0,
        clip_gradient=None,
        learning_rate=None,
        lr_scheduler=None,
        sym=None,
        begin_num_update=0,
        multi_precision=False,
        param_dict=None,
        **kwargs,
    ) -> None:
        name = type(self).__name__
        if kwargs:
            raise TypeError(
                f"{name}: unknown options {sorted(kwargs)}; the options every optimizer takes "
                "are rescale_grad, param_idx2name, wd, clip_gradient, learning_rate, "
                "lr_scheduler, begin_num_update, multi_precision, param_dict (see "
                f"help(mx.optimizer.{name}) for its own)"
            )
        if sym is not None:
            raise ValueError(
                f"{name}: sym= is not supported (the MXNet facade has no symbols); set the "
                "multipliers with set_lr_mult / set_wd_mult or Parameter.lr_mult / wd_mult"
            )
        if param_idx2name is not None and not isinstance(param_idx2name, dict):
            raise TypeError(
                f"{name}: param_idx2name must be a dict of parameter index -> name, got "
                f"{type(param_idx2name).__name__}"
            )
        if lr_scheduler is not None and not callable(lr_scheduler):
            raise TypeError(
                f"{name}: lr_scheduler must be an mx.lr_scheduler object (called with the "
                f"update count), got {type(lr_scheduler).__name__}"
            )
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None:
            # MXNet: an explicit learning_rate overrides the schedule's base rate
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult: dict = {}
        self.wd_mult: dict = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts: dict[int, dict] = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0  # the Updater updates one parameter at a time
        self.idx2name = dict(param_idx2name or {})
        self.sym_info = ()
        self.param_dict = param_dict if param_dict else {}
        from ..numpy_extension import is_np_array

        self.allow_np_array = is_np_array()
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- the registry ------------------------------------------------------------------
    @staticmethod
    def register(klass: type[Optimizer]) -> type[Optimizer]:
        """Register `klass` under its lower-cased class name (for `create` and Trainer)."""
        if not (isinstance(klass, type) and issubclass(klass, Optimizer)):
            raise TypeError(
                "mx.optimizer.register: decorate a subclass of mx.optimizer.Optimizer, got "
                f"{klass!r}"
            )
        name = klass.__name__.lower()
        old = Optimizer.opt_registry.get(name)
        if old is not None and old is not klass:
            warnings.warn(
                f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is overriding "
                f"existing optimizer {old.__module__}.{old.__name__}",
                stacklevel=2,
            )
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs) -> Optimizer:
        """An instance of the optimizer registered as `name` (case-insensitive)."""
        if not isinstance(name, str):
            raise TypeError(f"mx.optimizer.create: name must be a str, got {type(name).__name__}")
        klass = Optimizer.opt_registry.get(name.lower())
        if klass is None:
            raise ValueError(
                f"Cannot find optimizer {name}: mx.optimizer.create knows "
                f"{sorted(Optimizer.opt_registry)} (register a new one with "
                "@mx.optimizer.register)"
            )
        return klass(**kwargs)

    # -- learning rate and multipliers -------------------------------------------------
    @property
    def learning_rate(self) -> float:
        """The current rate: the schedule's at `num_update` when there is one."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr) -> None:
        """Set the rate; raises UserWarning when an lr_scheduler owns it (as MXNet)."""
        if self.lr_scheduler is not None:
            raise UserWarning(
                "LRScheduler of the optimizer has already been defined. Note that "
                "set_learning_rate can mutate the value of the learning rate of the optimizer "
                "only when the LRScheduler of the optimizer is undefined."
            )
        self.lr = lr

    def set_lr_scale(self, args_lrscale) -> None:
        """Deprecated in MXNet; use set_lr_mult."""
        raise DeprecationWarning("Optimizer.set_lr_scale is deprecated; use set_lr_mult")

    def set_lr_mult(self, args_lr_mult: dict) -> None:
        """Per-parameter learning-rate multipliers, keyed by index or name."""
        self.lr_mult = dict(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Per-parameter weight-decay multipliers, keyed by index or name; a named
        parameter whose name ends neither in `_weight` nor `_gamma` gets 0 (MXNet's)."""
        self.wd_mult = {
            n: 0.0 for n in self.idx2name.values() if not n.endswith(("_weight", "_gamma"))
        }
        self.wd_mult.update(args_wd_mult)

    def _set_current_context(self, device_id: int) -> None:
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

    def _update_count(self, index) -> None:
        """Count one update of `index` (or of each index of a list); `num_update` is the
        largest count."""
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            count = self._index_update_count.get(idx, self.begin_num_update) + 1
            self._index_update_count[idx] = count
            self.num_update = max(count, self.num_update)

    def _mult(self, index, table: dict, attr: str) -> float:
        if index in self.param_dict:
            return getattr(self.param_dict[index], attr)
        if index in table:
            return table[index]
        if index in self.idx2name:
            return table.get(self.idx2name[index], 1.0)
        return 1.0

    def _get_lrs(self, indices) -> list[float]:
        lr = self.learning_rate
        return [lr * self._mult(i, self.lr_mult, "lr_mult") for i in indices]

    def _get_lr(self, index) -> float:
        """The rate of parameter `index`: the current rate times its lr_mult."""
        return self._get_lrs([index])[0]

    def _get_wds(self, indices) -> list[float]:
        return [self.wd * self._mult(i, self.wd_mult, "wd_mult") for i in indices]

    def _get_wd(self, index) -> float:
        """The weight decay of parameter `index`: wd times its wd_mult."""
        return self._get_wds([index])[0]

    # -- states and updates ------------------------------------------------------------
    def create_state(self, index, weight):
        """The auxiliary state of one weight (momentum, moments...); None here."""
        return None

    def create_state_multi_precision(self, index, weight):
        """`create_state`, with a float32 master copy first for a float16 weight when
        `multi_precision` is set: `(master, state)`."""
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            return (master, self.create_state(index, master))
        if weight.dtype == np.float16:
            warnings.warn(
                "Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                "convergence. Consider using multi_precision=True option of the optimizer",
                stacklevel=2,
            )
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state) -> None:
        """Write the updated `weight` in place from `grad` and `state` (subclasses)."""
        raise NotImplementedError(
            f"{type(self).__name__}.update(index, weight, grad, state) is not implemented; "
            "a subclass of mx.optimizer.Optimizer defines it"
        )

    def update_multi_precision(self, index, weight, grad, state) -> None:
        """`update`, on the float32 master copy for a float16 weight with
        `multi_precision` (the weight then gets the master's values)."""
        if self.multi_precision and weight.dtype == np.float16:
            master, inner = state
            self.update(index, master, grad.astype(np.float32), inner)
            write_data(weight, master)
        else:
            self.update(index, weight, grad, state)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("param_dict", None)  # Parameters are not saved (MXNet's rule)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__ = state
        self.param_dict = {}

    # -- helpers of the concrete optimizers ---------------------------------------------
    def _kernel_clip(self):
        """MXNet's update operators clip only for a truthy, non-negative clip_gradient."""
        c = self.clip_gradient
        return c if c and c >= 0 else None

    def _begin(self, index, weight, grad) -> tuple[float, float]:
        """Check the arrays, count the update and return (lr, wd) of `index`."""
        _check(type(self).__name__, weight, grad)
        self._update_count(index)
        return self._get_lr(index), self._get_wd(index)


register = Optimizer.register
create = Optimizer.create_optimizer


def _check(name: str, weight, grad) -> None:
    for what, a in (("weight", weight), ("grad", grad)):
        if not isinstance(a, Tensor):
            raise TypeError(
                f"{name}.update: {what} must be an mx.nd.NDArray / mx.np.ndarray, got "
                f"{type(a).__name__}"
            )
    if tuple(weight.shape) != tuple(grad.shape):
        raise ValueError(
            f"{name}.update: weight has shape {tuple(weight.shape)} but grad has shape "
            f"{tuple(grad.shape)}; pass the gradient of that weight"
        )


def _raw(t: Tensor) -> Any:
    """The values of `t` as a NumPy array (its storage on the CPU, a copy from a GPU), read
    again after each `write_data` of `t`."""
    return t.detach().numpy()


def _xp(t: Tensor) -> Any:
    """The array module of `_raw(t)` (NumPy: the updates compute on the host)."""
    return np


def _zeros(weight: Tensor, dtype=None) -> Tensor:
    """An `mx.nd.NDArray` of zeros shaped as `weight` (float32 unless `dtype`, as
    MXNet's `zeros(weight.shape, weight.context)`), on its device."""
    from ....creation import zeros
    from ..ndarray import NDArray

    t = zeros(tuple(weight.shape), dtype=dtype or np.float32, device=weight.device)
    return as_class(t, NDArray)


class Updater:
    """Applies an optimizer to (index, grad, weight) triples, creating each index's state
    at its first update (`mx.optimizer.get_updater`). `get_states` / `set_states` pickle
    the states (and the optimizer, with `dump_optimizer=True`)."""

    def __init__(self, optimizer: Optimizer) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                "mx.optimizer.Updater: optimizer must be an mx.optimizer.Optimizer, got "
                f"{type(optimizer).__name__}"
            )
        self.optimizer = optimizer
        self.states: dict = {}
        self.states_synced: dict = {}
        self.aggregate_updates = False

    def __call__(self, index, grad, weight) -> None:
        if isinstance(index, (list, tuple)):
            triples = list(zip(index, grad, weight, strict=True))
        else:
            triples = [(index, grad, weight)]
        for i, g, w in triples:
            if i not in self.states:
                self.states[i] = self.optimizer.create_state_multi_precision(i, w)
                self.states_synced[i] = True
            self.optimizer.update_multi_precision(i, w, g, self.states[i])

    def sync_state_context(self, state, context):
        """One device per process: the state is where the weight is already."""
        return state

    def set_states(self, states: bytes) -> None:
        """Restore what `get_states` returned."""
        loaded = pickle.loads(states)
        if isinstance(loaded, tuple) and len(loaded) == 2:
            self.states, self.optimizer = loaded
        else:
            self.states = loaded
        self.states_synced = dict.fromkeys(self.states, False)

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The pickled states (with the optimizer when `dump_optimizer`)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer: Optimizer) -> Callable[..., None]:
    """An `Updater` of `optimizer`."""
    return Updater(optimizer)
