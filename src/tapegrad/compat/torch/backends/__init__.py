"""`torch.backends`: what a script asks about the compute libraries, answered for tapegrad
(NumPy on the CPU, CuPy on a GPU). Flags a script sets (`cudnn.benchmark = True`) are kept
and change nothing: tapegrad has one algorithm per op.

    >>> import tapegrad.compat.torch as torch
    >>> torch.backends.mps.is_available()
    False
"""

from __future__ import annotations

from ..._facade import facade_getattr
from . import cuda, cudnn, mkldnn, mps, openmp  # noqa: F401

__getattr__ = facade_getattr(
    __name__,
    "the PyTorch facade (torch.backends)",
    {},
    {
        "quantized": "quantization is not supported",
        "opt_einsum": "einsum contraction order is NumPy's",
    },
)
