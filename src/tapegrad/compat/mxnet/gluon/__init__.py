"""`mx.gluon`: Blocks, Parameters, losses, the Trainer and data loading on tapegrad.

>>> from tapegrad.compat import mxnet as mx
>>> net = mx.gluon.nn.Dense(1)
>>> net.initialize()
>>> trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
"""

from __future__ import annotations

from ..._facade import facade_getattr
from . import contrib, data, loss, model_zoo, nn, rnn, utils  # noqa: F401
from .block import Block, HybridBlock, SymbolBlock  # noqa: F401
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict  # noqa: F401
from .trainer import Trainer  # noqa: F401

__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.gluon)",
    {},
    {"metric": "use mx.np operations (e.g. (pred.argmax(1) == y).mean())"},
)
