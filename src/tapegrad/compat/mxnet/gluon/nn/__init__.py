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
from .activations import ELU, GELU, SELU, Activation, LeakyReLU, PReLU, SiLU, Swish  # noqa: F401
from .basic_layers import (  # noqa: F401
    BatchNorm,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    GroupNorm,
    HybridLambda,
    Identity,
    InstanceNorm,
    Lambda,
    LayerNorm,
)
from .conv_layers import (  # noqa: F401
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    Conv1D,
    Conv1DTranspose,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalAvgPool3D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPool3D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
    ReflectionPad2D,
)

_HINTS = {
    "SyncBatchNorm": "tapegrad has one device per process; use BatchNorm (or "
    "gluon.contrib.nn.SyncBatchNorm, which is BatchNorm)",
    "HybridConcatenate": "use gluon.contrib.nn.HybridConcurrent",
    "Concatenate": "use gluon.contrib.nn.Concurrent",
}
__getattr__ = facade_getattr(__name__, "the MXNet facade (mx.gluon.nn)", {}, _HINTS)
__dir__ = facade_dir(__name__, {})
