"""`torch.nn.utils`: clip_grad_norm_ and friends (tapegrad.nn.utils); `torch.nn.utils.rnn`
is its own module (packed sequences)."""

from __future__ import annotations

from ...._facade import forward_getattr
from . import rnn  # noqa: F401  (torch.nn.utils.rnn after `import torch`, as in PyTorch)

__getattr__ = forward_getattr(
    __name__,
    "the PyTorch facade (torch.nn.utils)",
    "tapegrad.nn.utils",
)
