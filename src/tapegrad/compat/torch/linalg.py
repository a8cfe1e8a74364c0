"""`torch.linalg` as an importable module: tapegrad.linalg (inv, det, slogdet, solve, norms).

>>> import tapegrad.compat.torch.linalg as LA
>>> LA.det(tg.eye(2) * 3)
tensor(9.)
"""

from __future__ import annotations

from .._facade import forward_getattr

__getattr__ = forward_getattr(__name__, "the PyTorch facade (torch.linalg)", "tapegrad.linalg")
