"""`mx.gluon.rnn`: the fused recurrent layers (`RNN`, `LSTM`, `GRU`) and the cells
(`RNNCell`, `LSTMCell`, `GRUCell`, stacks and modifiers) of MXNet 1.9.1's Gluon.

>>> x = mx.nd.ones((5, 4, 8))
>>> lstm = mx.gluon.rnn.LSTM(16, num_layers=2)   # layout "TNC": (time, batch, feature)
>>> lstm.initialize()
>>> out, (h, c) = lstm(x, lstm.begin_state(batch_size=4))
>>> out.shape, h.shape
((5, 4, 16), (2, 4, 16))
"""

from __future__ import annotations

from ...._facade import facade_getattr
from .rnn_cell import (
    BidirectionalCell,
    DropoutCell,
    GRUCell,
    HybridRecurrentCell,
    HybridSequentialRNNCell,
    LSTMCell,
    ModifierCell,
    RecurrentCell,
    ResidualCell,
    RNNCell,
    SequentialRNNCell,
    ZoneoutCell,
)
from .rnn_layer import GRU, LSTM, RNN

__all__ = [
    "RNN",
    "LSTM",
    "GRU",
    "RecurrentCell",
    "HybridRecurrentCell",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
    "SequentialRNNCell",
    "HybridSequentialRNNCell",
    "DropoutCell",
    "ModifierCell",
    "ZoneoutCell",
    "ResidualCell",
    "BidirectionalCell",
]

__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.gluon.rnn)",
    {},
    {
        "LSTMPCell": "it is mx.gluon.contrib.rnn.LSTMPCell (as in MXNet)",
        "VariationalDropoutCell": "it is mx.gluon.contrib.rnn.VariationalDropoutCell (as in MXNet)",
    },
)
