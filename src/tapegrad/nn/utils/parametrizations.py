"""tg.nn.utils.parametrizations: weight normalisation and spectral normalisation as
parametrizations (`parametrize.register_parametrization`), PyTorch's current API.

    >>> layer = tg.nn.utils.parametrizations.weight_norm(tg.nn.Linear(4, 3))
    >>> [name for name, _ in layer.named_parameters()]
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""

from __future__ import annotations

from ... import creation
from ...autograd.modes import no_grad
from ...tensor import Tensor
from ..conv import ConvTranspose1d, ConvTranspose2d
from ..module import Module
from . import parametrize

_TRANSPOSED = (ConvTranspose1d, ConvTranspose2d)  # weight (in, out, ...)

__all__ = ["weight_norm", "spectral_norm"]


def norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of `v` over every dimension but `dim`, kept as size-1 dimensions (so it
    broadcasts against `v`); dim=-1: the norm of the whole tensor."""
    if dim == -1:
        return (v * v).sum().sqrt()
    axes = tuple(a for a in range(v.ndim) if a != dim)
    return (v * v).sum(axes, keepdim=True).sqrt()


class _WeightNorm(Module):
    """weight = g * v / ||v||, the norm taken over every dimension but `dim`."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, self.dim), weight


def weight_norm_dim(dim: int | None, ndim: int, fn: str) -> int:
    """PyTorch's reading of weight_norm's `dim`: None and -1 mean the whole tensor."""
    if dim is None or dim == -1:
        return -1
    return _dim(dim, ndim, fn)


def _dim(dim: int, ndim: int, fn: str) -> int:
    if not -ndim <= dim < max(ndim, 1):
        raise ValueError(f"{fn}: dim {dim} is out of range for a {ndim}-d weight")
    return dim % ndim if ndim else 0


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize `module.<name>` as g * v / ||v|| (Salimans & Kingma, 2016): originals
    `original0` (g, the norms over every dimension but `dim`; None: one norm of the whole
    tensor) and `original1` (v, the direction). Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"weight_norm: {type(module).__name__} has no tensor '{name}'")
    norm = _WeightNorm(weight_norm_dim(dim, weight.ndim, "weight_norm"))
    parametrize.register_parametrization(module, name, norm, unsafe=True)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma the largest singular value of the weight (as a matrix with
    `dim` first), estimated by power iteration on the buffers `_u`, `_v` (updated in
    training mode, as PyTorch's)."""

    def __init__(self, weight: Tensor, n_power_iterations: int, dim: int, eps: float) -> None:
        super().__init__()
        if n_power_iterations <= 0:
            raise ValueError(
                f"spectral_norm: n_power_iterations must be positive, got {n_power_iterations}"
            )
        self.dim = dim
        self.eps = eps
        self.n_power_iterations = n_power_iterations
        if weight.ndim > 1:
            matrix = self._matrix(weight)
            h, w = matrix.shape
            kw = {"dtype": weight.dtype, "device": weight.device}
            self.register_buffer("_u", _normalize(creation.randn(h, **kw), eps))
            self.register_buffer("_v", _normalize(creation.randn(w, **kw), eps))
            self._power_method(matrix, 15)  # start close to the top singular vectors

    def _matrix(self, weight: Tensor) -> Tensor:
        return _weight_matrix(weight, self.dim)

    def _power_method(self, matrix: Tensor, iterations: int) -> None:
        with no_grad():
            m = matrix.detach()
            for _ in range(iterations):
                self._u.copy_(_normalize(m @ self._v, self.eps))
                self._v.copy_(_normalize(m.T @ self._u, self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        matrix = self._matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (matrix @ v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value  # any weight is its own original: sigma is recomputed from it


def _weight_matrix(weight: Tensor, dim: int) -> Tensor:
    """`weight` as the matrix whose top singular value spectral norm divides by: axis `dim`
    first, the rest flattened (one definition for this module and the hook API's)."""
    if dim != 0:
        weight = weight.permute(dim, *[a for a in range(weight.ndim) if a != dim])
    return weight.reshape(weight.shape[0], -1)


def _normalize(x: Tensor, eps: float) -> Tensor:
    return x / (x * x).sum().sqrt().clamp(min=eps)


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide `module.<name>` by its spectral norm (Miyato et al., 2018), estimated by
    `n_power_iterations` power-iteration steps per forward in training mode. `dim`: the
    output dimension (default 1 for transposed convolutions, else 0). Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"spectral_norm: {type(module).__name__} has no tensor '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _TRANSPOSED) else 0
    norm = _SpectralNorm(weight, n_power_iterations, _dim(dim, weight.ndim, "spectral_norm"), eps)
    parametrize.register_parametrization(module, name, norm)
    return module
