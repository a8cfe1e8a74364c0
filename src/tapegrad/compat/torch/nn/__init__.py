"""`torch.nn`: tapegrad.nn (Module, Parameter, layers, losses), `functional`, `init`, `utils`.

>>> from tapegrad.compat.torch import nn
>>> model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
"""

from __future__ import annotations

from ..._facade import forward_getattr
from . import functional, init, modules, parallel, utils  # noqa: F401
from .parallel import DataParallel  # noqa: F401  (one device: the module itself)

_DENY = {
    "SyncBatchNorm": "use BatchNorm2d (one device per process)",
}
__getattr__ = forward_getattr(__name__, "the PyTorch facade (torch.nn)", "tapegrad.nn", _DENY)
