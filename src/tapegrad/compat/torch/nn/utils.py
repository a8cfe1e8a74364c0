"""`torch.nn.utils`: clip_grad_norm_ and friends (tapegrad.nn.utils)."""

from __future__ import annotations

from ..._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__,
    "the PyTorch facade (torch.nn.utils)",
    "tapegrad.nn.utils",
    {"rnn": "packed sequences are not supported; pad the batch"},
)
