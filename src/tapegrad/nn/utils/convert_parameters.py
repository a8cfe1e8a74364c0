"""A model's parameters as one flat vector, and back."""

from __future__ import annotations

from ...engine.versions import bump_version
from ...ops import joins
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """One flat tensor of every parameter's values, in order; differentiable, as PyTorch's
    (a function of the vector, e.g. a Hessian-vector product, reaches the parameters)."""
    flat = [p.reshape(-1) for p in parameters]
    if not flat:
        raise ValueError("parameters_to_vector: got no parameters")
    return joins.cat(flat, 0)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Write a flat vector back into the parameters, in order (not tracked)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected a Tensor, got {type(vec).__name__}")
    params = list(parameters)
    need = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.shape[0] != need:
        raise ValueError(
            f"vector_to_parameters: the parameters hold {need} values, the vector has shape "
            f"{tuple(vec.shape)}"
        )
    data = vec.detach()._data
    offset = 0
    for p in params:
        n = p._data.size
        p._data[...] = data[offset : offset + n].reshape(p.shape)
        bump_version(p)
        offset += n
