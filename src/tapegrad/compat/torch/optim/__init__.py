"""`torch.optim`: tapegrad.optim (SGD, Adam, AdamW, RMSprop, Adagrad, LBFGS) and
`lr_scheduler`."""

from __future__ import annotations

from ..._facade import forward_getattr
from . import lr_scheduler, swa_utils  # noqa: F401

__getattr__ = forward_getattr(__name__, "the PyTorch facade (torch.optim)", "tapegrad.optim")
