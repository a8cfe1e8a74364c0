"""`torch.nn.utils`: clip_grad_norm_ and friends (tapegrad.nn.utils); `rnn`, `parametrize`
and `parametrizations` are modules of their own, as in PyTorch."""

from __future__ import annotations

from ...._facade import forward_getattr
from . import parametrizations, parametrize, rnn  # noqa: F401  (loaded with torch, as PyTorch's)

__getattr__ = forward_getattr(
    __name__,
    "the PyTorch facade (torch.nn.utils)",
    "tapegrad.nn.utils",
)
