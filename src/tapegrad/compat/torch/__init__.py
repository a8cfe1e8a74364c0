"""The PyTorch facade: run PyTorch autograd scripts and simple models on tapegrad.

Change the import line only:

    import tapegrad.compat.torch as torch          # was: import torch
    from tapegrad.compat.torch import nn, optim    # was: from torch import nn, optim

tapegrad's core follows PyTorch's names and semantics, so `torch.X` is `tapegrad.X` for
every X the core provides (tensors, creation, math, `no_grad`, ...), `torch.nn` is
`tapegrad.nn`, `torch.optim` is `tapegrad.optim`, `torch.utils.data` is `tapegrad.data`.
A name the core lacks raises an AttributeError saying the facade does not support it;
see docs/migrating-from-pytorch.md.
"""

from __future__ import annotations

import sys

from .._facade import forward_getattr, resolve
from . import (  # noqa: F401
    accelerator,
    amp,
    autograd,
    backends,
    cuda,
    distributions,
    func,
    functional,
    jit,
    linalg,
    nn,
    onnx,
    optim,
    serialization,
    utils,
)
from ._compile import compile  # noqa: F401,A004
from ._inplace import *  # noqa: F403  (torch.sin_, torch.relu_, ...: the in-place forms)
from ._legacy import (  # noqa: F401
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from ._out import CREATION_OUT, OUT_FUNCTIONS, with_creation_out, with_out
from ._runtime import (  # noqa: F401
    get_default_device,
    get_num_threads,
    set_default_device,
    set_num_threads,
)
from ._sparse import sparse_coo_tensor, spmm  # noqa: F401  (stored dense)
from ._tensor_type import Tensor  # noqa: F401  (torch.Tensor(data): default dtype)
from .amp import autocast, is_autocast_enabled  # noqa: F401
from .serialization import load, save  # noqa: F401  (PyTorch's objects, not tg.save's)

__version__ = "2.0.0+tapegrad"  # the PyTorch API this facade follows

Size = tuple


class device:  # noqa: N801 - PyTorch's name
    """`torch.device("cpu")`, `torch.device("cuda", 0)`: a device name tapegrad understands."""

    def __init__(self, type, index=None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index  # noqa: A001
        name, _, idx = str(type).partition(":")
        if name not in ("cpu", "cuda"):
            raise ValueError(f"unknown device {type!r}; tapegrad has 'cpu' and 'cuda'")
        self.type: str = name
        self.index = int(idx) if idx else index

    def __eq__(self, other) -> bool:
        other = device(other) if isinstance(other, str) else other
        return isinstance(other, device) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return (
            f"device(type='{self.type}'"
            + ("" if self.index is None else f", index={self.index}")
            + ")"
        )


def is_tensor(obj) -> bool:
    """True for a tapegrad tensor."""
    from ...tensor import Tensor as CoreTensor

    return isinstance(obj, CoreTensor)


def is_floating_point(t) -> bool:
    """True when `t` has a floating dtype."""
    from ... import dtypes

    return dtypes.is_floating(t.dtype)


def numel(t) -> int:
    """The number of elements of `t`."""
    return t.numel()


def use_deterministic_algorithms(mode: bool, warn_only: bool = False) -> None:
    """Accepted: tapegrad's CPU ops are deterministic."""


_DENY = {
    # tapegrad's own layout and names that PyTorch does not have
    "autodiff": "GradManager is MegEngine's API; use tapegrad.autodiff directly",
    "compat": None,
    "backend": None,
    "creation": None,
    "dtypes": None,
    "engine": None,
    "ops": None,
    "io": None,
    "getitem": None,
    "viz": None,
    "data": "use torch.utils.data",
    "bool_": "use torch.bool",
    "expand_dims": "use torch.unsqueeze",
    "take_along_axis": "use torch.take_along_dim",
    "uniform": "use torch.rand or torch.empty(...).uniform_()",
    "distributed": "torch.distributed is not supported; tapegrad.distributed has an MPI-based "
    "data-parallel API of its own",
    "fx": "torch.fx is not supported",
    "sparse": "sparse tensors are not supported",
    "fft": "torch.fft is not supported",
    "complex64": "complex tensors are not supported",
    "complex128": "complex tensors are not supported",
    "mps": "only 'cpu' and 'cuda' devices exist",
    "hub": "torch.hub is not supported",
    "quantization": "not supported",
}
_ALIASES = {
    "random": "tapegrad.random",
    "softmax": "tapegrad.nn.functional:softmax",
    "log_softmax": "tapegrad.nn.functional:log_softmax",
}
# names the core does not provide (yet): what to do instead (none at present; sort, topk,
# randperm, meshgrid, diag, tril, triu, trace, dist and lerp now come from the core)
_HINTS: dict[str, str] = {}
_forward = forward_getattr(
    __name__, "the PyTorch facade (torch)", "tapegrad", _DENY, _ALIASES, _HINTS
)


def __getattr__(name: str):
    target = OUT_FUNCTIONS.get(name)
    if target is not None:
        value = with_out(name, resolve(target))  # the core function, taking out= as well
    elif name in CREATION_OUT:
        value = with_creation_out(name, resolve(CREATION_OUT[name]))
    else:
        return _forward(name)
    setattr(sys.modules[__name__], name, value)
    return value
