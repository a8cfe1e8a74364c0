"""`torch.nn.modules` and its submodules: the facade's `torch.nn` classes under the paths
PyTorch defines them at (`torch.nn.modules.linear.Linear`, `torch.nn.modules.rnn.LSTM`),
for code that names those paths: `torch.serialization.safe_globals([...])` lists,
`isinstance` checks, subclasses, `from torch.nn.modules.utils import _pair`.

Each submodule gives every name of the facade's `torch.nn` (so `modules.conv.Linear`
resolves too, where PyTorch would raise); `NonDynamicallyQuantizableLinear`, the Linear
subclass PyTorch's MultiheadAttention holds, is `Linear` itself.

>>> from tapegrad.compat.torch.nn.modules.linear import Linear
>>> from tapegrad.compat.torch.nn.modules.utils import _pair
>>> Linear is tg.nn.Linear, _pair(3)
(True, (3, 3))
"""

from __future__ import annotations

import collections.abc
import itertools
import sys
import types
from typing import Any

from ...._facade import unsupported

# PyTorch's torch/nn/modules/*.py
_SUBMODULES = [
    "activation",
    "adaptive",
    "batchnorm",
    "channelshuffle",
    "container",
    "conv",
    "distance",
    "dropout",
    "flatten",
    "fold",
    "instancenorm",
    "lazy",
    "linear",
    "loss",
    "module",
    "normalization",
    "padding",
    "pixelshuffle",
    "pooling",
    "rnn",
    "sparse",
    "transformer",
    "upsampling",
    "utils",
]
_RENAMED = {"NonDynamicallyQuantizableLinear": "Linear"}


def _ntuple(n: int, name: str):
    def parse(x: Any) -> tuple:
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(itertools.repeat(x, n))

    parse.__name__ = parse.__qualname__ = name
    parse.__doc__ = f"`x` as an {n}-tuple (an iterable as a tuple): PyTorch's `{name}`."
    return parse


_UTILS = {
    "_single": _ntuple(1, "_single"),
    "_pair": _ntuple(2, "_pair"),
    "_triple": _ntuple(3, "_triple"),
    "_quadruple": _ntuple(4, "_quadruple"),
    "_ntuple": lambda n, name="parse": _ntuple(n, name),
}
_single, _pair, _triple, _quadruple = (
    _UTILS[k] for k in ("_single", "_pair", "_triple", "_quadruple")
)


def _nn_name(where: str, name: str):
    from ... import nn

    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(nn, _RENAMED.get(name, name))
    except AttributeError:
        raise unsupported(f"the PyTorch facade ({where})", name) from None


def _submodule(leaf: str) -> types.ModuleType:
    full = f"{__name__}.{leaf}"
    module = types.ModuleType(full, f"`torch.nn.modules.{leaf}`: the facade's torch.nn names.")
    if leaf == "utils":
        vars(module).update(_UTILS)
    vars(module)["__getattr__"] = lambda name: _nn_name(f"torch.nn.modules.{leaf}", name)
    sys.modules[full] = module  # (so that `import torch.nn.modules.rnn` finds it)
    return module


for _leaf in _SUBMODULES:
    globals()[_leaf] = _submodule(_leaf)


def __getattr__(name: str):
    return _nn_name("torch.nn.modules", name)
