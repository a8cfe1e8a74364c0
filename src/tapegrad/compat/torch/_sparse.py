"""PyTorch's sparse COO constructor and `torch.spmm`, on dense storage.

tapegrad has no sparse layouts. `torch.sparse_coo_tensor(indices, values, size)` builds the
dense tensor with the same values (duplicate indices summed, as PyTorch's `to_dense` and its
arithmetic sum them), so code that builds an adjacency matrix, adds it to `torch.eye` and
multiplies it with features (pytorch/examples gcn, gat) gets PyTorch's numbers; memory is the
dense size. `Tensor.to_sparse()` is a dense copy and `Tensor.to_dense()` the tensor itself;
`is_sparse` is False.

>>> import tapegrad.compat.torch as torch
>>> i = torch.tensor([[0, 1, 1], [2, 0, 0]])
>>> torch.sparse_coo_tensor(i, torch.tensor([3.0, 4.0, 5.0]), (2, 3))
tensor([[0., 0., 3.],
        [9., 0., 0.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import creation, dtypes
from ...tensor import Tensor

__all__ = ["sparse_coo_tensor", "spmm"]


def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **_ignored: Any,  # pin_memory, check_invariants, is_coalesced: nothing to do densely
) -> Tensor:
    """torch.sparse_coo_tensor: the tensor whose entries at `indices` (sparse_dim x nnz)
    are `values` (nnz x dense dims), zero elsewhere, duplicates summed; stored dense.

    Args:
        size: the full shape; None infers it as PyTorch does (each sparse dim one past its
            largest index, then the values' own trailing dims).
        dtype: the result's dtype (the values are cast); None keeps the values'.
        requires_grad: make the result a leaf that requires grad. Gradients also flow
            to `values` when they require grad.

    >>> import tapegrad.compat.torch as torch
    >>> torch.sparse_coo_tensor([[0, 2]], [1.0, 2.0]).tolist()
    [1.0, 0.0, 2.0]
    """
    idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
    if idx.ndim != 2 or not (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
        raise ValueError(
            "sparse_coo_tensor: indices must be a 2-D integer tensor (sparse_dim x nnz), "
            f"got shape {idx.shape} of {idx.dtype}"
        )
    vals = values if isinstance(values, Tensor) else creation.tensor(values)
    if dtype is not None:
        vals = vals.to(dtype)
    sparse_dim, nnz = idx.shape
    if vals.ndim == 0 or vals.shape[0] != nnz:
        raise ValueError(
            f"sparse_coo_tensor: values must have one row per index column ({nnz}), got "
            f"shape {tuple(vals.shape)}"
        )
    dense_dims = tuple(vals.shape[1:])
    if size is None:
        sparse_size = tuple(int(m) + 1 for m in idx.max(axis=1)) if nnz else (0,) * sparse_dim
        shape = sparse_size + dense_dims
    else:
        shape = tuple(int(s) for s in size)
        if len(shape) != sparse_dim + len(dense_dims) or shape[sparse_dim:] != dense_dims:
            raise ValueError(
                f"sparse_coo_tensor: size {shape} does not fit {sparse_dim} sparse dims and "
                f"values of shape {tuple(vals.shape)} (expected {sparse_dim} sizes, then "
                f"{dense_dims})"
            )
        sparse_size = shape[:sparse_dim]
    if nnz and ((idx < 0).any() or (idx >= np.array(sparse_size)[:, None]).any()):
        raise RuntimeError(
            f"sparse_coo_tensor: an index is out of bounds for size {shape}; the indices "
            f"must be in 0..size-1 of each sparse dim"
        )
    flat = creation.tensor(np.ravel_multi_index(tuple(idx), sparse_size).astype(np.int64))
    cells = int(np.prod(sparse_size, dtype=np.int64))
    out = creation.zeros((cells, *dense_dims), dtype=vals.dtype).index_add(0, flat, vals)
    out = out.reshape(shape)
    if device is not None:
        out = out.to(str(getattr(device, "type", device)))
    if requires_grad:
        if not dtypes.is_floating(out.dtype):
            raise RuntimeError(
                "sparse_coo_tensor: only floating point tensors can require gradients; "
                "pass a floating dtype"
            )
        out = out.detach().requires_grad_(True)
    return out


def spmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """torch.spmm: the matrix product `input @ mat2` (input sparse or dense in PyTorch;
    dense here).

    >>> import tapegrad.compat.torch as torch
    >>> torch.spmm(torch.eye(2), torch.ones(2, 1)).tolist()
    [[1.0], [1.0]]
    """
    if input.ndim != 2 or mat2.ndim != 2:
        raise ValueError(
            f"spmm: both arguments must be matrices, got {input.ndim}-D and {mat2.ndim}-D"
        )
    return input @ mat2
