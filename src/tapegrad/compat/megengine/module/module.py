"""`M.Module`: tapegrad.nn.Module whose parameters join no tape until a GradManager
attaches them (MegEngine's model: only attached tensors are tracked).

Order and state follow MegEngine: `parameters()`, `named_parameters()`, `buffers()` and
`state_dict()` walk each module's attributes in name order, depth first (a Linear gives
`bias` before `weight`); `state_dict()` values are `np.ndarray` copies (tensors with
`keep_var=True`), and `load_state_dict` takes arrays or tensors.

    >>> import tapegrad.compat.megengine.module as M
    >>> [k for k, _ in M.Linear(2, 1).named_parameters()]
    ['bias', 'weight']
"""

from __future__ import annotations

from collections import OrderedDict

from ....nn.module import Module as _CoreModule
from ....nn.module import Parameter as _CoreParameter
from ....tensor import Tensor as _CoreTensor
from .._tensor import Parameter, from_core

__all__ = ["Module"]


def _as_mge(value):
    """A core layer's parameter as an untracked `mge.Parameter` sharing its storage (what
    MegEngine's layers hold: nothing records them until a GradManager attaches them)."""
    if not isinstance(value, _CoreParameter) or value.is_lazy:
        return value
    if not isinstance(value, Parameter):
        req = value.grad_req
        value = Parameter(value)
        value.grad_req = req
    if value.grad_fn is None and value.requires_grad:
        value.requires_grad_(False)  # leaves the ambient tape (a GradManager's stays)
    return value


class Module(_CoreModule):
    """Base class of MegEngine-style models: define `forward`; `parameters()` feeds
    `gm.attach(...)` and the optimizer."""

    def __init__(self, *args, name=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        object.__setattr__(self, "name", name)
        for key, p in list(super().named_parameters(recurse=False)):  # made before we
            setattr(self, key, p)  # could see them (our __setattr__ converts them)

    def __setattr__(self, name, value) -> None:
        super().__setattr__(name, _as_mge(value))

    def register_parameter(self, name, param) -> None:
        super().register_parameter(name, _as_mge(param))

    def register_buffer(self, name, tensor, persistent=True) -> None:
        # a layer's buffers (BatchNorm's running statistics) are mge.Tensors sharing the
        # core's storage, so that the layer's in-place updates show in them
        super().register_buffer(name, None if tensor is None else from_core(tensor), persistent)

    # ------------------------------------------------------------------ MegEngine's walk
    def _flatten(
        self,
        *,
        recursive=True,
        with_key=False,
        with_parent=False,
        prefix=None,
        predicate=lambda _: True,
        seen=None,
    ):
        """MegEngine's walk over a module's members: every attribute holding a Tensor or a
        Module, also inside lists, tuples and dicts (keys `a.0`, `a.1.x`), attribute names
        sorted, depth first, each object once. Yields the leaves `predicate` accepts (with
        their key and/or parent module when asked)."""
        for key, leaf, parent in _walk(self, prefix, recursive, set() if seen is None else seen):
            if not predicate(leaf):
                continue
            if with_key and with_parent:
                yield key, leaf, parent
            elif with_key:
                yield key, leaf
            elif with_parent:
                yield leaf, parent
            else:
                yield leaf

    def parameters(self, recursive=True, requires_grad=None, **kwargs):
        """The parameters, in MegEngine's order (children too unless `recursive=False`)."""
        for _, p in self.named_parameters(recursive=recursive):
            yield p

    def named_parameters(self, prefix="", recursive=True, requires_grad=None, **kwargs):
        """(name, parameter) pairs in MegEngine's order: attribute names sorted, depth
        first; parameters held in lists and dicts are named `attr.index`."""
        yield from self._flatten(
            recursive=recursive, with_key=True, prefix=prefix or None, predicate=_is_param
        )

    def buffers(self, recursive=True, **kwargs):
        """The tensors that are not parameters (a Tensor attribute is a buffer, as in
        MegEngine), in MegEngine's order."""
        for _, b in self.named_buffers(recursive=recursive):
            yield b

    def named_buffers(self, prefix="", recursive=True, **kwargs):
        yield from self._flatten(
            recursive=recursive, with_key=True, prefix=prefix or None, predicate=_is_buffer
        )

    def tensors(self, recursive=True, **kwargs):
        """Every parameter and buffer, in MegEngine's order."""
        for _, t in self.named_tensors(recursive=recursive):
            yield t

    def named_tensors(self, prefix="", recursive=True, **kwargs):
        yield from self._flatten(
            recursive=recursive, with_key=True, prefix=prefix or None, predicate=_is_tensor
        )

    def children(self, **kwargs):
        """The direct submodules (also those in lists and dicts), attribute names sorted."""
        for _, m in self.named_children():
            yield m

    def named_children(self, **kwargs):
        yield from self._flatten(recursive=False, with_key=True, predicate=_is_module)

    def modules(self, with_parent=False, **kwargs):
        """This module, then every submodule depth first (MegEngine's order);
        `with_parent=True` gives (module, parent) pairs."""
        for item in self.named_modules(with_parent=with_parent):
            yield item[1:] if with_parent else item[1]

    def named_modules(self, prefix=None, with_parent=False, **kwargs):
        """("", self) (or `prefix`), then (key, submodule) depth first in MegEngine's order;
        `with_parent=True` adds each one's parent module (None for this one)."""
        head = (prefix or "", self)
        yield (*head, None) if with_parent else head
        yield from self._flatten(
            with_key=True, with_parent=with_parent, prefix=prefix, predicate=_is_module
        )

    def state_dict(self, rst=None, prefix="", keep_var=False, **kwargs):
        """name -> value of every tensor: each module's own (names sorted), then its
        children's (sorted), as MegEngine; values are NumPy copies (the tensors themselves
        with `keep_var=True`)."""
        out = OrderedDict() if rst is None else rst
        _state_walk(self, prefix, out, keep_var)
        return out

    def load_state_dict(self, state_dict, strict=True, **kwargs):
        """Copy values (arrays or tensors) into the parameters and buffers, in place:
        every name and shape is checked before anything is written. With `strict=False`
        names missing on either side are skipped. A callable `state_dict` is called as
        `f(name, tensor)` for each tensor and returns its new value (or None: keep it)."""
        import numpy as np

        from ....tensor import Tensor, write_data

        targets = self.state_dict(keep_var=True)
        if callable(state_dict) and not hasattr(state_dict, "items"):
            state_dict = {k: state_dict(k, v) for k, v in targets.items()}
            state_dict = {k: v for k, v in state_dict.items() if v is not None}
            strict = False
        given = dict(state_dict)
        if strict:
            missing = [k for k in targets if k not in given]
            unused = [k for k in given if k not in targets]
            if unused:
                raise KeyError(f"load_state_dict: unused params violate `strict=True`: {unused}")
            if missing:
                raise KeyError(f"load_state_dict: missing params violate `strict=True`: {missing}")
        writes = []
        for k, target in targets.items():
            if k not in given:
                continue
            value = given[k]
            arr = value.numpy() if isinstance(value, Tensor) else np.asarray(value)
            if tuple(arr.shape) != tuple(target.shape):
                raise ValueError(
                    f"load_state_dict: param `{k}` has shape {tuple(arr.shape)} in the state "
                    f"dict but {tuple(target.shape)} in the module; nothing was loaded"
                )
            writes.append((target, arr))
        for target, arr in writes:  # validated: now write
            write_data(target, arr.astype(target.dtype, copy=False))

    def train(self, mode=True, recursive=True):
        return super().train(mode)

    def zero_grad(self, set_to_none=True) -> None:
        super().zero_grad(set_to_none)


# the core Module's own tables and bookkeeping: not members in MegEngine's sense
_CORE_SLOTS = frozenset(
    {
        "_parameters",
        "_buffers",
        "_modules",
        "_non_persistent",
        "_forward_pre_hooks",
        "_forward_hooks",
    }
)


def _is_param(x) -> bool:
    return isinstance(x, _CoreParameter)


def _is_buffer(x) -> bool:
    return isinstance(x, _CoreTensor) and not isinstance(x, _CoreParameter)


def _is_tensor(x) -> bool:
    return isinstance(x, _CoreTensor)


def _is_module(x) -> bool:
    return isinstance(x, _CoreModule)


def _own_members(module) -> dict:
    """A module's attributes as MegEngine sees them: plain attributes and the core's
    registered parameters, buffers and children, by name (None entries left out, and the
    core's non-persistent buffers, such as BatchNorm's num_batches_tracked, which
    MegEngine's layers do not have)."""
    d = module.__dict__
    members = {k: v for k, v in d.items() if k not in _CORE_SLOTS}
    for table in ("_parameters", "_buffers", "_modules"):
        members.update((k, v) for k, v in d.get(table, {}).items() if v is not None)
    for k in d.get("_non_persistent", ()):
        members.pop(k, None)
    return members


def _expand(key: str, value):
    """(key, leaf) for a Tensor or Module; lists and tuples by index and dicts by sorted
    key, recursively (`a.0`, `a.1.x`); anything else holds no members."""
    if isinstance(value, (_CoreTensor, _CoreModule)):
        yield key, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _expand(f"{key}.{i}", v)
    elif isinstance(value, dict):
        for k in sorted(value):
            yield from _expand(f"{key}.{k}", value[k])


def _walk(module, prefix, recursive: bool, seen: set):
    """(key, leaf, parent) over `module`'s members in MegEngine's order, each object once."""
    head = "" if prefix is None else prefix + "."
    seen.add(id(module))
    members = _own_members(module)
    for key in sorted(members):
        for sub, leaf in _expand(key, members[key]):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            yield head + sub, leaf, module
            if recursive and isinstance(leaf, _CoreModule):
                yield from _walk(leaf, head + sub, recursive, seen)


def _state_walk(mod, prefix: str, out: dict, keep_var: bool) -> None:
    """Own tensors (sorted keys, persistent ones), then each child's, as MegEngine."""
    children = []
    for key, leaf, _ in _walk(mod, None, False, set()):
        if isinstance(leaf, _CoreModule):
            children.append((key, leaf))
        elif not getattr(leaf, "is_lazy", False):
            out[prefix + key] = leaf if keep_var else leaf.numpy()
    for key, child in children:
        _state_walk(child, prefix + key + ".", out, keep_var)
