"""`mx.gluon.contrib.rnn`: `LSTMPCell`, `VariationalDropoutCell`, `dynamic_unroll`
(rnn_cell.py) and the convolutional cells Conv{1,2,3}D{RNN,LSTM,GRU}Cell (conv_rnn_cell.py)."""

from __future__ import annotations

from . import conv_rnn_cell, rnn_cell
from .conv_rnn_cell import (
    Conv1DGRUCell,
    Conv1DLSTMCell,
    Conv1DRNNCell,
    Conv2DGRUCell,
    Conv2DLSTMCell,
    Conv2DRNNCell,
    Conv3DGRUCell,
    Conv3DLSTMCell,
    Conv3DRNNCell,
)
from .rnn_cell import LSTMPCell, VariationalDropoutCell, dynamic_unroll

__all__ = [
    "LSTMPCell",
    "VariationalDropoutCell",
    "dynamic_unroll",
    "Conv1DRNNCell",
    "Conv2DRNNCell",
    "Conv3DRNNCell",
    "Conv1DLSTMCell",
    "Conv2DLSTMCell",
    "Conv3DLSTMCell",
    "Conv1DGRUCell",
    "Conv2DGRUCell",
    "Conv3DGRUCell",
    "conv_rnn_cell",
    "rnn_cell",
]
