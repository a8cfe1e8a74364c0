"""`M.Module`: tapegrad.nn.Module whose parameters join no tape until a GradManager
attaches them (MegEngine's model: only attached tensors are tracked)."""
from __future__ import annotations

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

    def parameters(self, recursive=True, requires_grad=None, **kwargs):
        """The parameters (of the children too unless `recursive=False`)."""
        return super().parameters(recurse=recursive)

    def named_parameters(self, prefix="", recursive=True, requires_grad=None, **kwargs):
        return super().named_parameters(prefix=prefix or "", recurse=recursive)

    def train(self, mode=True, recursive=True):
        return super().train(mode)

    def zero_grad(self, set_to_none=True) -> None:
        super().zero_grad(set_to_none)
