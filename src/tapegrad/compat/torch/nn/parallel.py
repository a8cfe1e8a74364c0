"""`torch.nn.parallel` on one device: `DataParallel` and `data_parallel` run the module
as it is, which is what PyTorch's do with at most one device (on a CPU-only machine
`DataParallel` is a plain wrapper: its state_dict keys gain the `module.` prefix).
Scripts that import `torch.nn.parallel` for the multi-GPU case then run unchanged on one
device; asking for several devices is an error, and `DistributedDataParallel` is not
supported (tapegrad.distributed has a data-parallel API of its own).

>>> import tapegrad.compat.torch as torch
>>> net = torch.nn.DataParallel(torch.nn.Linear(2, 1))
>>> list(net.state_dict())
['module.weight', 'module.bias']
"""

from __future__ import annotations

from typing import Any

from ....nn import Module
from ..._facade import unsupported

__all__ = ["DataParallel", "data_parallel"]


def _one_device(what: str, device_ids) -> list:
    ids = [] if device_ids is None else list(device_ids)
    if len(ids) > 1:
        raise RuntimeError(
            f"{what}: device_ids={ids} asks for {len(ids)} devices; tapegrad runs a process "
            "on one device (use tapegrad.distributed for data parallelism across processes)"
        )
    return ids


class DataParallel(Module):
    """`module` behind PyTorch's DataParallel interface, on one device: `forward` calls
    `module`; `device_ids` (at most one), `output_device` and `dim` are accepted.

    >>> import tapegrad.compat.torch as torch
    >>> net = torch.nn.DataParallel(torch.nn.Linear(2, 1))
    >>> net(torch.ones(3, 2)).shape
    (3, 1)
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        self.device_ids = _one_device("DataParallel", device_ids)
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """`module(*inputs, **kwargs)`."""
        return self.module(*inputs, **kwargs)


def data_parallel(
    module, inputs, device_ids=None, output_device=None, dim: int = 0, module_kwargs=None
):
    """`module(*inputs, **module_kwargs)` on the one device (`inputs` a tensor or a tuple).

    >>> import tapegrad.compat.torch as torch
    >>> torch.nn.parallel.data_parallel(torch.nn.Linear(2, 1), torch.ones(3, 2)).shape
    (3, 1)
    """
    _one_device("data_parallel", device_ids)
    args = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*args, **(module_kwargs or {}))


def __getattr__(name: str):
    hint = None
    if name in ("DistributedDataParallel", "distributed"):
        hint = "tapegrad.distributed has an MPI-based data-parallel API of its own"
    raise unsupported("the PyTorch facade (torch.nn.parallel)", name, hint)
