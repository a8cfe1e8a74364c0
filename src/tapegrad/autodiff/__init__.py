"""tg.autodiff: MegEngine-style gradient management (`GradManager`).

    >>> gm = tg.autodiff.GradManager().attach(w)
    >>> with gm:
    ...     loss = (w * x).sum()
    ...     gm.backward(loss)
"""
from __future__ import annotations

from ..autograd.grad_manager import GradManager

__all__ = ["GradManager"]
