"""`torch.distributions.constraints`: tapegrad.distributions.constraints.

>>> from tapegrad.compat.torch.distributions import constraints
>>> constraints.positive.check(tg.tensor(-1.0))
tensor(False)
"""

from __future__ import annotations

from ..._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__,
    "the PyTorch facade (torch.distributions.constraints)",
    "tapegrad.distributions.constraints",
)
