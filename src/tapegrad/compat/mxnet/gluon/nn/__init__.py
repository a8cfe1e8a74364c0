"""`mx.gluon.nn`: Gluon's layers and containers on tapegrad.

    >>> from tapegrad.compat.mxnet.gluon.nn import HybridSequential, Dense
    >>> net = HybridSequential()
    >>> net.add(Dense(units=3), Dense(units=1))
    >>> net.initialize()
"""
from __future__ import annotations

from ...._facade import facade_dir, facade_getattr
from ..block import Block, HybridBlock, HybridSequential, Sequential, SymbolBlock  # noqa: F401
from ..rnn import LSTM  # noqa: F401  (MXNet keeps it in gluon.rnn; both work here)
from .activations import ELU, GELU, Activation, LeakyReLU, SiLU, Swish  # noqa: F401
from .basic_layers import (  # noqa: F401
    BatchNorm,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    HybridLambda,
    Identity,
    Lambda,
    LayerNorm,
)
from .conv_layers import (  # noqa: F401
    AvgPool1D,
    AvgPool2D,
    Conv1D,
    Conv2D,
    GlobalAvgPool2D,
    GlobalMaxPool2D,
    MaxPool1D,
    MaxPool2D,
)

_HINTS = {
    "Conv3D": "only Conv1D and Conv2D are provided",
    "Conv2DTranspose": "not provided; use tapegrad.nn.functional.conv_transpose2d in a Block",
    "InstanceNorm": "not provided; use LayerNorm or BatchNorm",
    "GroupNorm": "not provided by the facade; use tapegrad.nn.GroupNorm in core code",
    "SyncBatchNorm": "tapegrad has one device per process; use BatchNorm",
    "PReLU": "not provided; use LeakyReLU with a fixed slope",
    "HybridConcatenate": "not provided; concatenate the outputs with mx.np.concatenate",
    "Concatenate": "not provided; concatenate the outputs with mx.np.concatenate",
}
__getattr__ = facade_getattr(__name__, "the MXNet facade (mx.gluon.nn)", {}, _HINTS)
__dir__ = facade_dir(__name__, {})
