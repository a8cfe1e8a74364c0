"""`torch.autograd.forward_ad`: dual_level, make_dual, unpack_dual (tapegrad's forward mode).

>>> import tapegrad.compat.torch.autograd.forward_ad as fwAD
"""

from __future__ import annotations

from ....autograd.forward_ad import (  # noqa: F401
    UnpackedDualTensor,
    dual_level,
    enter_dual_level,
    exit_dual_level,
    make_dual,
    unpack_dual,
)

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]
