"""`M.Module`: tapegrad.nn.Module whose parameters join no tape until a GradManager
attaches them (MegEngine's model: only attached tensors are tracked)."""
from __future__ import annotations

from ....engine.state import AMBIENT
from ....nn.module import Module as _CoreModule
from ....nn.module import Parameter as _CoreParameter

__all__ = ["Module"]


def _untrack(value) -> None:
    if isinstance(value, _CoreParameter) and value.grad_fn is None and value._tapes & AMBIENT:
        value.requires_grad_(False)


class Module(_CoreModule):
    """Base class of MegEngine-style models: define `forward`; `parameters()` feeds
    `gm.attach(...)` and the optimizer."""

    def __init__(self, *args, name=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        object.__setattr__(self, "name", name)
        for p in self.parameters():  # those a core layer made before we could see them
            _untrack(p)

    def __setattr__(self, name, value) -> None:
        _untrack(value)
        super().__setattr__(name, value)

    def register_parameter(self, name, param) -> None:
        _untrack(param)
        super().register_parameter(name, param)

    def parameters(self, recursive=True, requires_grad=None, **kwargs):
        """The parameters (of the children too unless `recursive=False`)."""
        return super().parameters(recurse=recursive)

    def named_parameters(self, prefix="", recursive=True, requires_grad=None, **kwargs):
        return super().named_parameters(prefix=prefix or "", recurse=recursive)

    def train(self, mode=True, recursive=True):
        return super().train(mode)

    def zero_grad(self, set_to_none=True) -> None:
        super().zero_grad(set_to_none)
