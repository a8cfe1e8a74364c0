"""`torch.functional`: the module PyTorch's tensor functions of that name live in (`einsum`,
`split`, `norm`, `meshgrid`, `unique`, ...); each is the facade's `torch.<name>`.

>>> import tapegrad.compat.torch.functional as F
>>> F.broadcast_shapes((2, 1), (3,))
(2, 3)
>>> F.einsum("ij->j", tg.ones(2, 3))
tensor([2., 2., 2.])

`stft`, `istft`, `lu`, `pca_lowrank` and `svd_lowrank` are not supported.
"""

from __future__ import annotations

from ... import (  # noqa: F401  (the facade's torch.<name> of each is the core's)
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    einsum,
    meshgrid,
    norm,
    split,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)
from .._facade import unsupported

# what torch.functional exports (torch 2.13's __all__), less what the facade lacks
__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "cdist",
    "chain_matmul",
    "einsum",
    "meshgrid",
    "norm",
    "split",
    "tensordot",
    "unique",
    "unique_consecutive",
    "unravel_index",
]
_LACKING = {
    "stft": "spectral transforms (torch.fft) are not supported",
    "istft": "spectral transforms (torch.fft) are not supported",
    "lu": "LU factorisation is not exposed; use torch.linalg.solve / inv / det",
    "pca_lowrank": "use torch.linalg.svd (full SVD) instead",
    "svd_lowrank": "use torch.linalg.svd (full SVD) instead",
}


def __getattr__(name: str):
    raise unsupported("the PyTorch facade (torch.functional)", name, _LACKING.get(name))
