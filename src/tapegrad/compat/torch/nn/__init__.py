"""`torch.nn`: tapegrad.nn (Module, Parameter, layers, losses), `functional`, `init`, `utils`.

>>> from tapegrad.compat.torch import nn
>>> model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
"""

from __future__ import annotations

from ..._facade import forward_getattr
from . import functional, init, modules, utils  # noqa: F401

_DENY = {
    "DataParallel": "tapegrad runs on one device per process; use tapegrad.distributed",
    "parallel": "tapegrad runs on one device per process; use tapegrad.distributed",
    "SyncBatchNorm": "use BatchNorm2d (one device per process)",
}
__getattr__ = forward_getattr(__name__, "the PyTorch facade (torch.nn)", "tapegrad.nn", _DENY)
