"""`torch.backends.cuda`: whether the GPU path exists (CuPy), and the TF32 switches."""

from __future__ import annotations

import importlib.util


class _MatmulFlags:
    """`torch.backends.cuda.matmul.allow_tf32 = True`: accepted, kept, changes nothing."""

    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built() -> bool:
    """True when CuPy, tapegrad's GPU backend, is installed (a GPU may still be absent)."""
    return importlib.util.find_spec("cupy") is not None
