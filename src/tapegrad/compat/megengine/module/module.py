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
from .._tensor import Parameter

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

    def _mge_members(self, table: str, prefix: str, recursive: bool, seen: set):
        own, children = getattr(self, table), self._modules
        for key in sorted(set(own) | (set(children) if recursive else set())):
            value = own.get(key)
            persistent = table != "_buffers" or key not in self._non_persistent
            if value is not None and id(value) not in seen and persistent:
                seen.add(id(value))
                yield prefix + key, value
            child = children.get(key) if recursive else None
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield from _members(child, table, prefix + key + ".", recursive, seen)

    def parameters(self, recursive=True, requires_grad=None, **kwargs):
        """The parameters, in MegEngine's order (children too unless `recursive=False`)."""
        for _, p in self.named_parameters(recursive=recursive):
            yield p

    def named_parameters(self, prefix="", recursive=True, requires_grad=None, **kwargs):
        """(name, parameter) pairs in MegEngine's order: attribute names sorted, depth
        first."""
        yield from self._mge_members(
            "_parameters", prefix + "." if prefix else "", recursive, set()
        )

    def buffers(self, recursive=True, **kwargs):
        for _, b in self.named_buffers(recursive=recursive):
            yield b

    def named_buffers(self, prefix="", recursive=True, **kwargs):
        yield from self._mge_members("_buffers", prefix + "." if prefix else "", recursive, set())

    def state_dict(self, rst=None, prefix="", keep_var=False, **kwargs):
        """name -> value of every parameter and persistent buffer: each module's own
        (names sorted), then its children's (sorted), as MegEngine; values are NumPy copies
        (the tensors themselves with `keep_var=True`)."""
        out = OrderedDict() if rst is None else rst
        _state_walk(self, prefix, out, keep_var)
        return out

    def load_state_dict(self, state_dict, strict=True, **kwargs):
        """Copy values (arrays or tensors) into the parameters and buffers, in place."""
        import numpy as np

        from ....tensor import Tensor

        if callable(state_dict) and not hasattr(state_dict, "items"):
            state_dict = {k: state_dict(k, v) for k, v in self.state_dict(keep_var=True).items()}
            state_dict = {k: v for k, v in state_dict.items() if v is not None}
            strict = False
        values = OrderedDict(
            (k, v if isinstance(v, Tensor) else Tensor(np.asarray(v)))
            for k, v in state_dict.items()
        )
        return super().load_state_dict(values, strict=strict)

    def train(self, mode=True, recursive=True):
        return super().train(mode)

    def zero_grad(self, set_to_none=True) -> None:
        super().zero_grad(set_to_none)


def _members(module, table, prefix, recursive, seen):
    if isinstance(module, Module):
        yield from module._mge_members(table, prefix, recursive, seen)
        return
    # a core module inside a MegEngine one: the same walk over its tables
    own, children = getattr(module, table), module._modules
    for key in sorted(set(own) | set(children)):
        value = own.get(key)
        if value is not None and id(value) not in seen:
            seen.add(id(value))
            yield prefix + key, value
        child = children.get(key)
        if child is not None and id(child) not in seen:
            seen.add(id(child))
            yield from _members(child, table, prefix + key + ".", recursive, seen)


def _state_walk(mod, prefix: str, out: dict, keep_var: bool) -> None:
    own = dict(mod._parameters)
    own.update((k, v) for k, v in mod._buffers.items() if k not in mod._non_persistent)
    for key in sorted(own):
        value = own[key]
        if value is not None and not getattr(value, "is_lazy", False):
            out[prefix + key] = value if keep_var else value.numpy()
    for key in sorted(mod._modules):
        child = mod._modules[key]
        if child is not None:
            _state_walk(child, prefix + key + ".", out, keep_var)
