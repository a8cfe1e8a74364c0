"""tg.autodiff: MegEngine-style gradient management (`GradManager`).

>>> w, x = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
>>> gm = tg.autodiff.GradManager().attach(w)
>>> with gm:
...     loss = (w * x).sum()
...     gm.backward(loss)
>>> w.grad
tensor([3., 4.])
"""

from __future__ import annotations

from ..autograd.grad_manager import GradManager

__all__ = ["GradManager"]
