"""`torch.nn.utils.rnn`: PackedSequence, pack/pad helpers (tapegrad.nn.utils.rnn)."""

from __future__ import annotations

from ...._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__,
    "the PyTorch facade (torch.nn.utils.rnn)",
    "tapegrad.nn.utils.rnn",
)
