"""`torch.func` as an importable module: the transforms of tapegrad.func (`grad`,
`value_and_grad`, and whatever else tapegrad.func provides).

    >>> from tapegrad.compat.torch.func import grad
    >>> grad(lambda x: (x ** 2).sum())(tg.tensor([1.0, 2.0]))
    tensor([2., 4.])
"""
from __future__ import annotations

from .._facade import forward_getattr

__getattr__ = forward_getattr(__name__, "the PyTorch facade (torch.func)", "tapegrad.func")
