"""`megengine.core.tensor.dtype`: the plain NumPy dtypes; quantized dtypes are not supported.

>>> from tapegrad.compat.megengine.core.tensor import dtype
>>> dtype.is_differentible_dtype("float32"), dtype.is_differentible_dtype("int32")
(True, False)
"""

from __future__ import annotations

import numpy as np

from ...._facade import facade_getattr

__all__ = ["is_differentible_dtype", "is_quantize", "is_lowbit", "is_bfloat16"]


def is_differentible_dtype(dtype) -> bool:
    """True for floating point dtypes (the ones a GradManager may attach)."""
    return np.issubdtype(np.dtype(dtype), np.floating)


def is_quantize(dtype) -> bool:
    """Always False: the facade has no quantized dtypes."""
    return False


def is_lowbit(dtype) -> bool:
    """Always False: the facade has no low-bit dtypes."""
    return False


def is_bfloat16(dtype) -> bool:
    """Always False: bfloat16 is not supported."""
    return False


__getattr__ = facade_getattr(__name__, "the MegEngine facade (megengine.core.tensor.dtype)", {}, {})
