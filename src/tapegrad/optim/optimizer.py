"""Optimizer: parameter groups, per-parameter state, zero_grad, state_dict round trips.

Subclasses implement `_update(group, params, grads, states)` on raw backend arrays: the update
writes IN PLACE into each parameter's storage (`p._data`) with NumPy in-place ops, so a step
costs what the hand-written NumPy update costs, records nothing (arrays are never on a tape,
which is the same as running under `no_grad`) and keeps every view of the parameter valid.
Those that also implement `_update_flat` (and `_bucket_key`, `_flat_names`) get the
multi-tensor path of `flat.py` for their small parameters, unless a group sets
`foreach=False`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import backend, dtypes
from ..autograd.modes import enable_grad
from ..engine.versions import bump_version
from ..tensor import Tensor, _wrap
from . import flat

__all__ = ["Optimizer", "prepare_grad"]

# (np.ndarray[...] rather than numpy.typing's NDArray: no import of numpy.typing at run time)
Array = np.ndarray[Any, np.dtype[Any]]  # a parameter's, gradient's or state's backend array
Group = dict[str, Any]  # a parameter group: "params" (a list of tensors) and its options
ParamState = dict[str, Any]  # one parameter's state: name -> array or number
# what an optimizer is given: tensors, or parameter groups (dicts with a "params" entry)
Params = Iterable[Tensor] | Iterable[dict[str, Any]]

# The gradient options every optimizer built on `prepare_grad` takes (keyword-only), with
# their defaults, which change nothing (PyTorch's update). Documented in `prepare_grad`.
GRAD_OPTIONS = {"grad_scale": 1.0, "clip_value": None, "clip_after_decay": False}


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


# a default that a group must override; typed Any, as it may stand in for any option's value
required: Any = _Required()


class Optimizer:
    """Base class of every optimizer.

    Args:
        params: an iterable of tensors, or of dicts (parameter groups) with a "params" entry
            and any per-group options (e.g. `{"params": net.head.parameters(), "lr": 1e-3}`).
        defaults: the options a group gets when it does not set them.

    >>> w, b = tg.randn(3, requires_grad=True), tg.zeros(1, requires_grad=True)
    >>> opt = tg.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.1}], lr=0.01)
    """

    _nonnegative: tuple[str, ...] = ()  # group options `_validate_group` requires to be >= 0

    def __init__(self, params: Params, defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.state: dict[Tensor, ParamState] = {}  # parameter tensor -> {name: array or number}
        self.param_groups: list[Group] = []
        # (state names, parameter ids) -> flat.FlatChunk
        self._flat_cache: dict[flat.ChunkKey, flat.FlatChunk] = {}
        self._flat_scratch: dict[np.dtype[Any], Array] = {}  # dtype -> scratch the chunks use
        if isinstance(params, Tensor):
            raise TypeError(
                f"{type(self).__name__}: params should be an iterable of Tensors or dicts, got "
                "a single Tensor; wrap it in a list: [t]"
            )
        groups: list[Any] = list(params)
        if not groups:
            raise ValueError(
                f"{type(self).__name__} got an empty parameter list; pass model.parameters() of "
                "a model that has parameters (a lazy layer gets them at its first call)"
            )
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (fine-tuning, warm-up layers...)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, got {type(param_group).__name__}")
        group = dict(param_group)
        if "params" not in group:
            raise ValueError("a parameter group needs a 'params' entry (a list of tensors)")
        params = group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters must be an ordered collection, not a set")
        params = [params] if isinstance(params, Tensor) else list(params)
        for i, p in enumerate(params):
            _check_param(p, i, type(self).__name__)
        ids = {id(p) for p in params}
        if len(ids) != len(params):
            raise ValueError(
                f"{type(self).__name__}: a parameter appears twice in one parameter group; "
                "pass each parameter once"
            )
        for k, gi in enumerate(self.param_groups):
            if any(id(p) in ids for p in gi["params"]):
                raise ValueError(
                    f"{type(self).__name__}: some parameters appear in more than one parameter "
                    f"group (already in group {k}); each parameter may belong to one group only"
                )
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(
                    f"parameter group didn't specify a value of required option '{name}'"
                )
            group.setdefault(name, default)
        group["params"] = params
        self._validate_group(group)
        self.param_groups.append(group)

    def _validate_group(self, group: Group) -> None:
        """Check option values; subclasses extend it. Runs before the group is added."""
        lr = group.get("lr")
        if lr is not None and not (isinstance(lr, (int, float)) and lr >= 0):
            raise ValueError(f"Invalid learning rate: {lr!r}; lr must be a number >= 0")
        for name in self._nonnegative:
            if group[name] < 0:
                raise ValueError(f"Invalid {name} value: {group[name]}; it must be >= 0")
        foreach = group.get("foreach")
        if foreach is not None and not isinstance(foreach, bool):
            raise ValueError(
                f"Invalid foreach value: {foreach!r}; use None (the multi-tensor path where it "
                "applies), True (the same) or False (one parameter at a time)"
            )

    # ------------------------------------------------------------------ stepping
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient: None (default, frees memory) or zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    g = p._grad
                    if g.grad_fn is not None:
                        p._grad = _wrap(np.zeros_like(g._data))
                    else:
                        g._data[...] = 0
                        bump_version(g)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns `closure()` when given.

        `closure` re-evaluates the model and returns the loss (it is run with recording on).
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        work: list[tuple[Group, list[Tensor], list[Array]]] = []
        for group in self.param_groups:  # check every gradient before changing anything
            params: list[Tensor] = []
            grads: list[Array] = []
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if g._data.shape != p._data.shape:
                    raise RuntimeError(
                        f"{type(self).__name__}.step: a gradient has shape "
                        f"{g._data.shape} but its parameter has shape {p._data.shape}; "
                        "nothing was updated"
                    )
                params.append(p)
                grads.append(g._data)
            if params:
                work.append((group, params, grads))
        state = self.state
        if not hasattr(self, "_flat_cache"):  # made by a subclass that skipped __init__
            self._flat_cache, self._flat_scratch = {}, {}
        for group, params, grads in work:
            states: list[ParamState] = []
            for p in params:
                st = state.get(p)
                if st is None:
                    st = state[p] = {}
                states.append(st)
            arrays = [p._data for p in params]
            foreach = self._update_flat is not None and group.get("foreach") is not False
            if foreach and len(params) > 1 and self._flat_pays(group):
                rest = flat.foreach_step(self, group, params, arrays, grads, states)
                if rest:
                    self._update(
                        group,
                        [arrays[i] for i in rest],
                        [grads[i] for i in rest],
                        [states[i] for i in rest],
                    )
            else:
                self._update(group, arrays, grads, states)
            for p in params:
                bump_version(p)
        return loss

    def _update(
        self, group: Group, params: list[Array], grads: list[Array], states: list[ParamState]
    ) -> None:
        raise NotImplementedError

    # The multi-tensor path (flat.py); None: this optimizer updates one parameter at a time.
    # `_update_flat(group, chunk, params, grads, states, key)` updates the parameters of one
    # flat.FlatChunk (they share a dtype and `key`, what `_bucket_key(group, state)` gave for
    # each); `_flat_names(group)` names the state arrays the chunk keeps flat.
    _update_flat: Callable[..., None] | None = None

    def _flat_pays(self, group: Group) -> bool:
        """Whether the multi-tensor path is faster for this group's options."""
        return True

    def _bucket_key(self, group: Group, state: ParamState) -> Any:
        return None

    def _flat_names(self, group: Group) -> tuple[str, ...]:
        return ()

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state as plain data: `{"state": {index: {...}}, "param_groups": [...]}`.

        Parameters are named by their index across all groups (as PyTorch does); state arrays
        are returned as Tensors sharing memory with the optimizer's buffers, so `tg.save`
        can write them directly.
        """
        index: dict[int, int] = {}
        groups: list[dict[str, Any]] = []
        for group in self.param_groups:
            g = {k: copy.deepcopy(v) for k, v in group.items() if k != "params"}
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            g["params"] = ids
            groups.append(g)
        packed: dict[int, dict[str, Any]] = {}
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state.get(p)
                if st:
                    packed[index[id(p)]] = {
                        k: _wrap(v) if isinstance(v, np.ndarray) else v for k, v in st.items()
                    }
        return {"state": packed, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what `state_dict()` returned (or what `tg.load` read back from it).

        Everything is checked first (group count and sizes, state shapes); on any mismatch
        it raises and the optimizer is left exactly as it was.
        """
        if not isinstance(state_dict, dict) or "param_groups" not in state_dict:
            raise ValueError(
                "load_state_dict expects the dict returned by optimizer.state_dict() (with "
                "'state' and 'param_groups' entries)"
            )
        saved_groups = list(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has {len(saved_groups)} parameter groups but the optimizer "
                f"has {len(self.param_groups)}; build the optimizer the same way before loading"
            )
        id_map: dict[int, Tensor] = {}
        for k, (mine, saved) in enumerate(zip(self.param_groups, saved_groups, strict=False)):
            saved_ids = list(saved.get("params", []))
            if len(saved_ids) != len(mine["params"]):
                raise ValueError(
                    f"loaded state dict contains a parameter group ({k}) of {len(saved_ids)} "
                    f"parameters that doesn't match the optimizer's group of "
                    f"{len(mine['params'])} parameters"
                )
            for i, p in zip(saved_ids, mine["params"], strict=False):
                id_map[int(i)] = p
        new_state: dict[Tensor, ParamState] = {}
        for key, entry in dict(state_dict.get("state", {})).items():
            try:
                p = id_map[int(key)]
            except (KeyError, ValueError):
                raise ValueError(
                    f"loaded optimizer state names parameter {key!r}, which no parameter group "
                    "lists"
                ) from None
            st: ParamState = {}
            for name, v in dict(entry).items():
                if isinstance(v, (Tensor, np.ndarray)):
                    arr = v._data if isinstance(v, Tensor) else v
                    if arr.ndim and arr.shape != p._data.shape:
                        raise ValueError(
                            f"loaded optimizer state '{name}' of parameter {key} has shape "
                            f"{arr.shape} but the parameter has shape {p._data.shape}"
                        )
                    if not arr.ndim and (p._data.ndim or name == "step"):
                        v = arr.item()  # a count (a 0-d parameter's moments stay arrays)
                    else:  # a private copy, on the parameter's device, in its dtype
                        arr = backend.to_device(arr, backend.device_of(p._data))
                        v = arr.astype(p._data.dtype, copy=True)
                st[name] = v
            new_state[p] = st
        new_groups: list[Group] = []
        for mine, saved in zip(self.param_groups, saved_groups, strict=False):
            g = {k: v for k, v in mine.items() if k != "params"}  # options saved before
            g.update(
                {
                    k: _restore_option(mine.get(k), v)
                    for k, v in saved.items()  # they existed
                    if k != "params"
                }
            )
            g["params"] = mine["params"]
            self._validate_group(g)
            new_groups.append(g)
        self.state = new_state  # validated: now write
        self._flat_cache, self._flat_scratch = {}, {}  # they held the replaced state
        self.param_groups[:] = new_groups

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(group):
                if k != "params":
                    lines.append(f"    {k}: {group[k]}")
        return "\n".join(lines) + "\n)"


# `p` is None (never read) when weight_decay is 0: the multi-tensor path gathers none then
def prepare_grad(g: Array, p: Any, group: Group, weight_decay: float = 0.0) -> Array:
    """The gradient an update uses, from the raw gradient `g` of parameter array `p`.

    In this order: negated when `maximize`; multiplied by `grad_scale` (MXNet's
    `rescale_grad`, e.g. `1 / batch_size`, or an inverse loss scale); clipped elementwise to
    `[-clip_value, clip_value]` when `clip_value` is set (MXNet's `clip_gradient`); plus the
    L2 term `weight_decay * p`, added after the clipping (MXNet's SGD), or before it when
    `clip_after_decay` (MXNet's Adam). With the defaults this is PyTorch's gradient, and `g`
    itself is returned (never modified in place). SGD, Adam and AdamW use it.
    """
    if group.get("maximize"):
        g = -g
    scale = group.get("grad_scale", 1.0)
    if scale != 1.0:
        g = g * scale
    clip = group.get("clip_value")
    if clip is not None:
        if weight_decay and group.get("clip_after_decay"):
            g = g + weight_decay * p
            weight_decay = 0.0
        g = np.clip(g, -clip, clip)
    if weight_decay:
        g = g + weight_decay * p
    return g


def check_adam_options(group: Group) -> None:
    """The Adam family's options, checked as PyTorch does: betas in [0, 1), eps >= 0,
    weight_decay >= 0 (a ValueError naming the option). One check for Adam, AdamW, Adamax,
    NAdam and RAdam, so their messages stay the same."""
    b1, b2 = group["betas"]
    if not 0.0 <= b1 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {b1}; it must be in [0, 1)")
    if not 0.0 <= b2 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {b2}; it must be in [0, 1)")
    if group["eps"] < 0:
        raise ValueError(f"Invalid epsilon value: {group['eps']}; it must be >= 0")
    if group["weight_decay"] < 0:
        raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}; must be >= 0")


def validate_grad_options(group: Group) -> None:
    """Check the `prepare_grad` options of a parameter group (ValueError naming the option)."""
    scale = group.get("grad_scale", 1.0)
    if not isinstance(scale, (int, float)) or not np.isfinite(scale):
        raise ValueError(f"Invalid grad_scale value: {scale!r}; it must be a finite number")
    clip = group.get("clip_value")
    if clip is not None and not (isinstance(clip, (int, float)) and clip >= 0):
        raise ValueError(f"Invalid clip_value: {clip!r}; it must be None or a number >= 0")


def _restore_option(current: Any, saved: Any) -> Any:
    """JSON turns tuples into lists (betas); give the option back its original type."""
    if isinstance(current, tuple) and isinstance(saved, list):
        return tuple(saved)
    return saved


def _check_param(p: object, i: int, who: str) -> None:
    if not isinstance(p, Tensor):
        raise TypeError(
            f"{who} can only optimize Tensors, but parameter {i} is a {type(p).__name__}"
        )
    if not dtypes.is_floating(p.dtype):
        raise TypeError(f"{who}: parameter {i} has dtype {p.dtype}; only floating tensors train")
    if p.grad_fn is not None:
        raise ValueError(
            f"{who} can't optimize a non-leaf Tensor (parameter {i} was computed by "
            f"{p.grad_fn.name()}); optimize the leaves it was computed from, or detach it: "
            "p = y.detach().requires_grad_()"
        )
