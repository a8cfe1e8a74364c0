"""tg.nn.functional `pairwise_distance`: the p-norm of x1 - x2 (+ eps) over the last dim.

>>> pairwise_distance(tg.tensor([[0.0, 0.0]]), tg.tensor([[3.0, 4.0]]), eps=0.0).numpy()
array([5.], dtype=float32)
"""

from __future__ import annotations

from ..linalg import vector_norm
from ..tensor import Tensor

__all__ = ["pairwise_distance"]


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """Distance between matching rows: `||x1 - x2 + eps||_p` over the last dim (broadcast).

    Args:
        x1, x2: tensors that broadcast together; rows along the last dim.
        p: the norm's order (0, negative and inf allowed, as in `vector_norm`).
        eps: added to the difference (keeps the gradient finite at equal rows).
        keepdim: keep the reduced dim as size 1.
    """
    for name, t in (("x1", x1), ("x2", x2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"pairwise_distance: {name} must be a Tensor, got {type(t).__name__}")
    d = x1 - x2 + eps
    if d.ndim == 0:  # two numbers: their distance, as PyTorch
        return abs(d)
    return vector_norm(d, p, dim=-1, keepdim=keepdim)
