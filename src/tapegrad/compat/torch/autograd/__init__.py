"""`torch.autograd`: Function, grad, backward, gradcheck, modes (tapegrad.autograd).

>>> from tapegrad.compat.torch.autograd import Function
"""

from __future__ import annotations

from ..._facade import forward_getattr
from . import forward_ad, function, functional  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401


def Variable(data, requires_grad=False, volatile=False):  # noqa: N802 - PyTorch's (old) name
    """The pre-0.4 wrapper: returns `data` itself (a tensor), requiring grad if asked."""
    if volatile:
        raise ValueError("Variable(volatile=True) was removed from PyTorch; use torch.no_grad()")
    if requires_grad:
        data.requires_grad_(True)
    return data


_DENY = {
    name: "this is MXNet's record scope; use torch's requires_grad / no_grad"
    for name in (
        "record",
        "pause",
        "train_mode",
        "predict_mode",
        "is_recording",
        "is_training",
        "set_recording",
        "set_training",
        "mark_variables",
    )
}
_DENY.update(
    {
        "GradManager": "GradManager is MegEngine's API; use tapegrad.autodiff directly",
        "profiler": "the autograd profiler is not supported",
    }
)
__getattr__ = forward_getattr(
    __name__,
    "the PyTorch facade (torch.autograd)",
    "tapegrad.autograd",
    _DENY,
    {"graph": "tapegrad.autograd.graph"},
)
