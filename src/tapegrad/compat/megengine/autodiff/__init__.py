"""`mge.autodiff`: GradManager (tapegrad's, docs/recording.md) and Function.

>>> from tapegrad.compat.megengine.autodiff import GradManager
>>> model, x = mge.module.Linear(3, 1), mge.tensor([[1.0, 2.0, 3.0]])
>>> gm = GradManager().attach(model.parameters())
>>> with gm:
...     loss = model(x)
...     gm.backward(loss)
"""

from __future__ import annotations

from ....autograd.grad_manager import GradManager, GradManagerGroup  # noqa: F401
from ..._facade import facade_getattr
from .function import Function  # noqa: F401  (MegEngine's rules: see function.py)

__all__ = ["GradManager", "GradManagerGroup", "Function"]
__getattr__ = facade_getattr(__name__, "the MegEngine facade (mge.autodiff)", {})
