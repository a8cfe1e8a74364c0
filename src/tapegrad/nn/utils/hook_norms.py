"""tg.nn.utils.weight_norm / spectral_norm: PyTorch's older API for the two normalisations,
which many published models still use. The parameter is replaced by its factors
(`weight_g` and `weight_v`; `weight_orig` with buffers `weight_u`, `weight_v`) and a
forward pre-hook recomputes `module.weight` from them before each call. The newer API,
`tg.nn.utils.parametrizations`, keeps them as parametrizations instead.

    >>> layer = tg.nn.utils.spectral_norm(tg.nn.Linear(4, 3))
    >>> [name for name, _ in layer.named_parameters()], sorted(layer.state_dict())
    (['bias', 'weight_orig'], ['bias', 'weight_orig', 'weight_u', 'weight_v'])
"""

from __future__ import annotations

import warnings
from typing import Any

from ... import creation
from ...autograd.modes import no_grad
from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter
from .parametrizations import (
    _TRANSPOSED,
    _dim,
    _normalize,
    _weight_matrix,
    norm_except_dim,
    weight_norm_dim,
)

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


class WeightNormHook:
    """Recomputes `module.<name>` = g * v / ||v|| before each forward."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, self.dim))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


class SpectralNormHook:
    """Recomputes `module.<name>` = weight_orig / sigma before each forward (one power
    iteration step per forward in training mode, v first, as PyTorch's older API)."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        self.name = name
        self.n_power_iterations = n_power_iterations
        self.dim = dim
        self.eps = eps

    def matrix(self, weight: Tensor) -> Tensor:
        return _weight_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        matrix = self.matrix(weight)
        if do_power_iteration:
            with no_grad():
                m = matrix.detach()
                for _ in range(self.n_power_iterations):
                    v.copy_(_normalize(m.T @ u, self.eps))
                    u.copy_(_normalize(m @ v, self.eps))
            u, v = u.clone(), v.clone()
        sigma = (u * (matrix @ v)).sum()
        return weight / sigma

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))


def _hook(module: Module, kind: type, name: str) -> tuple[Any, Any] | None:
    """(handle key, hook) of the `kind` pre-hook for `name` on `module`, or None."""
    for key, hook in module._forward_pre_hooks.items():
        fn = hook[0] if isinstance(hook, tuple) else hook
        if isinstance(fn, kind) and getattr(fn, "name", None) == name:
            return key, fn
    return None


def _parameter(module: Module, name: str, fn: str) -> Parameter:
    weight = module._parameters.get(name)
    if not isinstance(weight, Parameter):
        raise ValueError(f"{fn}: {type(module).__name__} has no parameter '{name}'")
    return weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Replace parameter `name` by `name_g` (its norms over every dimension but `dim`;
    None: one norm) and `name_v` (the direction); returns the module. Deprecated, with
    PyTorch's FutureWarning: `parametrizations.weight_norm` is the current form."""
    warnings.warn(
        "`torch.nn.utils.weight_norm` is deprecated in favor of "
        "`torch.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    if _hook(module, WeightNormHook, name) is not None:
        raise RuntimeError(
            f"weight_norm: '{name}' of {type(module).__name__} is normalised already"
        )
    weight = _parameter(module, name, "weight_norm")
    hook = WeightNormHook(name, weight_norm_dim(dim, weight.ndim, "weight_norm"))
    del module._parameters[name]
    with no_grad():
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, hook.dim)))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute_weight(module))
    module.register_forward_pre_hook(hook)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo `weight_norm`: `name` is one parameter again, holding g * v / ||v||."""
    found = _hook(module, WeightNormHook, name)
    if found is None:
        raise ValueError(f"remove_weight_norm: weight_norm of '{name}' not found in {module}")
    key, hook = found
    with no_grad():
        weight = hook.compute_weight(module).detach()
    del module._parameters[name + "_g"], module._parameters[name + "_v"]
    module.__dict__.pop(name, None)
    module.register_parameter(name, Parameter(weight))
    del module._forward_pre_hooks[key]
    return module


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Replace parameter `name` by `name_orig` and divide it by its spectral norm before
    each forward, estimated by `n_power_iterations` power-iteration steps per training
    forward on the buffers `name_u`, `name_v`; returns the module."""
    if _hook(module, SpectralNormHook, name) is not None:
        raise RuntimeError(
            f"spectral_norm: '{name}' of {type(module).__name__} is normalised already"
        )
    if n_power_iterations < 0:
        raise ValueError(
            f"spectral_norm: n_power_iterations must be >= 0, got {n_power_iterations}"
        )
    weight = _parameter(module, name, "spectral_norm")
    if dim is None:
        dim = 1 if isinstance(module, _TRANSPOSED) else 0
    hook = SpectralNormHook(name, n_power_iterations, _dim(dim, weight.ndim, "spectral_norm"), eps)
    h, w = hook.matrix(weight).shape
    kw = {"dtype": weight.dtype, "device": weight.device}
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", _normalize(creation.randn(h, **kw), eps))
    module.register_buffer(name + "_v", _normalize(creation.randn(w, **kw), eps))
    module.register_forward_pre_hook(hook)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo `spectral_norm`: `name` is one parameter again, holding the normalised weight."""
    found = _hook(module, SpectralNormHook, name)
    if found is None:
        raise ValueError(f"remove_spectral_norm: spectral_norm of '{name}' not found in {module}")
    key, hook = found
    with no_grad():
        weight = hook.compute_weight(module, do_power_iteration=False).detach()
    del module._parameters[name + "_orig"]
    del module._buffers[name + "_u"], module._buffers[name + "_v"]
    module.__dict__.pop(name, None)
    module.register_parameter(name, Parameter(weight))
    del module._forward_pre_hooks[key]
    return module
