"""tg.nn.utils.parametrize: a module's tensor computed from another one, PyTorch's way.

`register_parametrization(module, "weight", p)` keeps the tensor it had as
`module.parametrizations.weight.original` (the Parameter the optimizer trains) and makes
`module.weight` the result of `p(original)`, recomputed at each access (or once per
`cached()` block). The module's class is swapped for a subclass with a property of that
name (`Parametrized<Class>`), as PyTorch does, so the module behaves as before everywhere
else; its state dict holds `parametrizations.weight.original`.

A parametrization with a `right_inverse(value)` is used to set the original from a value
(at registration, and on `module.weight = value`); one that returns a tuple keeps several
originals (`original0`, `original1`, ...), as weight normalisation does.

    >>> class Symmetric(tg.nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).T
    >>> layer = tg.nn.Linear(3, 3)
    >>> _ = tg.nn.utils.parametrize.register_parametrization(layer, "weight", Symmetric())
    >>> bool((layer.weight == layer.weight.T).all())
    True
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from ...autograd.modes import no_grad
from ...tensor import Tensor
from ..containers import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = [
    "register_parametrization",
    "remove_parametrizations",
    "is_parametrized",
    "cached",
    "type_before_parametrizations",
    "ParametrizationList",
]

_cache = threading.local()  # per thread: {(id(module), name): tensor} inside cached()


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside the block, each parametrized tensor is computed once (the first access) and
    reused: a recurrent layer's weight used at every time step costs one parametrization."""
    outer = getattr(_cache, "values", None)
    if outer is None:
        _cache.values = {}
    try:
        yield
    finally:
        if outer is None:
            _cache.values = None


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its original(s)."""

    def __init__(self, modules: list[Module], original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        value: Any = original
        with no_grad():
            for m in reversed(modules):
                inverse = getattr(m, "right_inverse", None)
                if inverse is not None:
                    value = inverse(value)
        if isinstance(value, Tensor):
            self.is_tensor = True
            self.ntensors = 1
            self.original = _keep(original, value)
        elif isinstance(value, (tuple, list)) and all(isinstance(v, Tensor) for v in value):
            self.is_tensor = False
            self.ntensors = len(value)
            for i, v in enumerate(value):
                setattr(self, f"original{i}", _as_parameter(v, original))
        else:
            raise TypeError(
                "register_parametrization: right_inverse must return a Tensor or a sequence "
                f"of Tensors, got {type(value).__name__}"
            )

    def right_inverse(self, value: Tensor) -> None:
        """Set the original(s) so that the parametrized tensor is `value`."""
        with no_grad():
            for m in reversed(list(self)):
                inverse = getattr(m, "right_inverse", None)
                if inverse is None:
                    raise RuntimeError(
                        f"parametrization {type(m).__name__} has no right_inverse: the "
                        "parametrized tensor cannot be assigned to"
                    )
                value = inverse(value)
            if self.is_tensor:
                _assign(self.original, value, self.unsafe)
            else:
                for i, v in enumerate(value):
                    _assign(getattr(self, f"original{i}"), v, self.unsafe)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in list(self)[1:]:
            x = m(x)
        return x


def _keep(original: Tensor, value: Tensor) -> Tensor:
    """The tensor to store as `original`: the original Parameter itself, holding `value`
    (an optimizer built before the registration keeps training it), else a new one."""
    if isinstance(original, Parameter):
        with no_grad():
            original.data = value
        return original
    return value


def _as_parameter(value: Tensor, like: Tensor) -> Tensor:
    if isinstance(like, Parameter):
        return Parameter(value.detach(), requires_grad=like.requires_grad)
    return value


def _assign(target: Tensor, value: Tensor, unsafe: bool) -> None:
    if not unsafe and (tuple(value.shape) != tuple(target.shape) or value.dtype != target.dtype):
        raise ValueError(
            f"parametrize: right_inverse gave a {tuple(value.shape)} {value.dtype} tensor for "
            f"an original of {tuple(target.shape)} {target.dtype}; pass unsafe=True to "
            "register_parametrization to allow that"
        )
    target.data = value.detach()


def _parametrized_class(module: Module) -> type:
    """The module's class, swapped the first time for a subclass that can hold properties."""
    cls = type(module)
    if getattr(cls, "_tapegrad_parametrized", False):
        return cls
    sub = type(f"Parametrized{cls.__name__}", (cls,), {"_tapegrad_parametrized": True})
    sub.__module__ = cls.__module__
    module.__class__ = sub
    module.parametrizations = ModuleDict()
    return sub


def _property(name: str) -> property:
    def get(self: Module) -> Tensor:
        values = getattr(_cache, "values", None)
        key = (id(self), name)
        if values is not None and key in values:
            return values[key]
        value: Tensor = self.parametrizations[name]()
        if values is not None:
            values[key] = value
        return value

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    return property(get, set_)


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make `module.<tensor_name>` the output of `parametrization` on the tensor it holds
    now (module docstring); a second call on the same name appends to the chain. Returns
    the module. `unsafe=True` allows a parametrization that changes shape or dtype."""
    if not isinstance(module, Module) or not isinstance(parametrization, Module):
        raise TypeError(
            "register_parametrization: module and parametrization must both be nn.Modules, "
            f"got {type(module).__name__} and {type(parametrization).__name__}"
        )
    if is_parametrized(module, tensor_name):
        chain = module.parametrizations[tensor_name]
        if not unsafe:
            current = getattr(module, tensor_name)
            out = parametrization(current)
            if tuple(out.shape) != tuple(current.shape) or out.dtype != current.dtype:
                raise ValueError(
                    f"register_parametrization: {type(parametrization).__name__} changes "
                    f"'{tensor_name}' from {tuple(current.shape)} {current.dtype} to "
                    f"{tuple(out.shape)} {out.dtype}; pass unsafe=True to allow it"
                )
        chain.append(parametrization)
        chain.unsafe |= unsafe
        return module
    original = module._parameters.get(tensor_name)
    if original is None:
        original = module._buffers.get(tensor_name)
    if not isinstance(original, Tensor):
        raise ValueError(
            f"register_parametrization: {type(module).__name__} has no parameter or buffer "
            f"'{tensor_name}'"
        )
    if not unsafe:
        out = parametrization(original)
        if not isinstance(out, Tensor):
            raise ValueError(
                f"register_parametrization: {type(parametrization).__name__} must return a "
                f"Tensor, got {type(out).__name__}"
            )
        if tuple(out.shape) != tuple(original.shape) or out.dtype != original.dtype:
            raise ValueError(
                f"register_parametrization: {type(parametrization).__name__} changes "
                f"'{tensor_name}' from {tuple(original.shape)} {original.dtype} to "
                f"{tuple(out.shape)} {out.dtype}; pass unsafe=True to allow it"
            )
    chain = ParametrizationList([parametrization], original, unsafe=unsafe)
    cls = _parametrized_class(module)
    delattr(module, tensor_name)
    module.parametrizations[tensor_name] = chain
    setattr(cls, tensor_name, _property(tensor_name))
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrization (on `tensor_name`, when given)."""
    chains = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(chains, ModuleDict):
        return False
    return len(chains) > 0 if tensor_name is None else tensor_name in chains


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization swapped it."""
    cls = type(module)
    return cls.__bases__[0] if getattr(cls, "_tapegrad_parametrized", False) else cls


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Undo the parametrizations of `tensor_name`: it becomes a plain parameter again,
    holding the parametrized value (`leave_parametrized=True`) or the original. The last
    one removed gives the module its class back."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(
            f"remove_parametrizations: {type(module).__name__} has no parametrization on "
            f"'{tensor_name}'"
        )
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            if tuple(value.shape) != tuple(original.shape) and not chain.unsafe:
                raise ValueError(
                    "remove_parametrizations: the parametrized tensor's shape differs from "
                    "the original's; pass leave_parametrized=False"
                )
            original.data = value.detach()
    else:
        if not leave_parametrized:
            raise ValueError(
                "remove_parametrizations: this parametrization keeps several originals; "
                "only leave_parametrized=True can turn them back into one tensor"
            )
        with no_grad():
            value = getattr(module, tensor_name).detach()
        original = Parameter(value, requires_grad=chain.original0.requires_grad)
    cls = type(module)
    delattr(cls, tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = type_before_parametrizations(module)
    return module
