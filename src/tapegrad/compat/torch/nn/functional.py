"""`torch.nn.functional` (import as F): tapegrad.nn.functional, whose activations take
PyTorch's `inplace=` (`F.relu(x, inplace=True)`) and are the very functions that layers such
as TransformerEncoderLayer hold (so a `safe_globals([F.relu])` list names what a pickled
model refers to)."""

from __future__ import annotations

from ..._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__, "the PyTorch facade (torch.nn.functional)", "tapegrad.nn.functional"
)
