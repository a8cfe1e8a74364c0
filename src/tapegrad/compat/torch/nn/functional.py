"""`torch.nn.functional` (import as F): tapegrad.nn.functional, plus the elementwise
activations the core keeps at top level."""

from __future__ import annotations

from ..._facade import forward_getattr

_TOP = ("relu", "sigmoid", "tanh", "softplus", "leaky_relu", "elu", "gelu", "silu", "pad")
__getattr__ = forward_getattr(
    __name__,
    "the PyTorch facade (torch.nn.functional)",
    "tapegrad.nn.functional",
    {},
    {name: f"tapegrad:{name}" for name in _TOP},
)
