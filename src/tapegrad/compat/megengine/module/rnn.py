"""`megengine.module.rnn`: MegEngine's RNNCell, LSTMCell, RNN and LSTM on tapegrad ops.

MegEngine's conventions, not PyTorch's where they differ:

- A cell holds `weight_ih` (G, input_size), `weight_hh` (G, hidden_size), `bias_ih` and
  `bias_hh` (G,), with G = hidden_size (RNNCell) or 4 * hidden_size (LSTMCell, gates in
  the order i, f, g, o). With `bias=False` the two biases are zero tensors (buffers), not
  absent.
- `RNN` / `LSTM` compute with one parameter, `_flatten_weights` of shape (G, size), that
  packs, in memory order, for each layer and then each direction: weight_ih, weight_hh,
  bias_ih, bias_hh (biases only with `bias=True`). They also keep `cells`, a list (layer)
  of lists (direction) of cells whose parameters appear in `parameters()` and
  `state_dict()` (keys `cells.0.0.weight_ih`, ...) but take no part in `forward`, as in
  MegEngine 1.13, so that MegEngine checkpoints load with `strict=True`.
- Every parameter starts uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)].

    >>> import tapegrad.compat.megengine.module as M
    >>> m = M.LSTM(3, 4, num_layers=2, bidirectional=True)
    >>> out, (h, c) = m(mge.tensor(np.ones((5, 2, 3), "float32")))
    >>> out.shape, h.shape, tuple(m._flatten_weights.shape)
    ((5, 2, 8), (4, 2, 4), (16, 46))
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .. import functional as F
from .._tensor import Parameter
from ..functional import nn as _Fnn
from . import init
from .module import Module

__all__ = ["RNNCell", "LSTMCell", "RNN", "LSTM"]

_NONLINEARITIES = ("tanh", "relu")


def _check_nonlinearity(where: str, nonlinearity: str) -> None:
    if nonlinearity not in _NONLINEARITIES:
        raise ValueError(f"{where}: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")


def _act(nonlinearity: str, x):
    return F.tanh(x) if nonlinearity == "tanh" else F.relu(x)


def _rnn_step(nonlinearity: str, x, h, w_ih, w_hh, b_ih, b_hh):
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return _act(nonlinearity, _Fnn.linear(x, w_ih, b_ih) + _Fnn.linear(h, w_hh, b_hh))


def _lstm_step(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One LSTM step with the gates (i, f, g, o) stacked along the feature axis."""
    hs = h.shape[-1]
    gates = _Fnn.linear(x, w_ih, b_ih) + _Fnn.linear(h, w_hh, b_hh)
    i = F.sigmoid(gates[:, :hs])
    f = F.sigmoid(gates[:, hs : 2 * hs])
    g = F.tanh(gates[:, 2 * hs : 3 * hs])
    o = F.sigmoid(gates[:, 3 * hs :])
    c_new = f * c + i * g
    return o * F.tanh(c_new), c_new


def _check_shape(where: str, what: str, t, shape: tuple) -> None:
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{where}: {what} must have shape {tuple(shape)}, got {tuple(t.shape)}")


class _RNNCellBase(Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.gate_hidden_size = num_chunks * hidden_size
        g = self.gate_hidden_size
        self.weight_ih = Parameter(np.zeros((g, input_size), dtype=np.float32))
        self.weight_hh = Parameter(np.zeros((g, hidden_size), dtype=np.float32))
        if bias:
            self.bias_ih = Parameter(np.zeros((g,), dtype=np.float32))
            self.bias_hh = Parameter(np.zeros((g,), dtype=np.float32))
        else:  # MegEngine keeps zero tensors (not parameters) in their place
            self.bias_ih = F.zeros((g,))
            self.bias_hh = F.zeros((g,))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]."""
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _check_input(self, x) -> None:
        name = type(self).__name__
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(
                f"{name}: input must have shape (batch, {self.input_size}), got {tuple(x.shape)}"
            )


class RNNCell(_RNNCellBase):
    """An Elman cell: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (`nonlinearity="relu"`:
    ReLU). `hx` (batch, hidden_size) defaults to zeros.

    >>> import tapegrad.compat.megengine.module as M
    >>> cell = M.RNNCell(3, 2)
    >>> cell(mge.tensor(np.ones((4, 3), "float32"))).shape
    (4, 2)
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh"
    ) -> None:
        _check_nonlinearity("RNNCell", nonlinearity)
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, num_chunks=1)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002 (MegEngine's name)
        self._check_input(input)
        if hx is None:
            hx = F.zeros((input.shape[0], self.hidden_size))
        _check_shape("RNNCell", "hx", hx, (input.shape[0], self.hidden_size))
        return _rnn_step(
            self.nonlinearity,
            input,
            hx,
            self.weight_ih,
            self.weight_hh,
            self.bias_ih,
            self.bias_hh,
        )


class LSTMCell(_RNNCellBase):
    """A long short-term memory cell: gates i, f, o = sigmoid(.), g = tanh(.),
    c' = f * c + i * g, h' = o * tanh(c'). `hx = (h, c)`, each (batch, hidden_size),
    defaults to zeros; returns `(h', c')`.

    >>> import tapegrad.compat.megengine.module as M
    >>> h, c = M.LSTMCell(3, 2)(mge.tensor(np.ones((4, 3), "float32")))
    >>> h.shape, c.shape
    ((4, 2), (4, 2))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002 (MegEngine's name)
        self._check_input(input)
        shape = (input.shape[0], self.hidden_size)
        if hx is None:
            h, c = F.zeros(shape), F.zeros(shape)
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError("LSTMCell: hx must be a pair (h, c) of (batch, hidden_size)")
            h, c = hx
        _check_shape("LSTMCell", "h", h, shape)
        _check_shape("LSTMCell", "c", c, shape)
        return _lstm_step(input, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class _RNNBase(Module):
    _num_chunks = 1

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0,
        bidirectional: bool = False,
        proj_size: int = 0,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        if (
            isinstance(dropout, bool)
            or not isinstance(dropout, numbers.Number)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                f"{name}: dropout should be a float in [0, 1] (the probability of an element "
                f"to be zero), got {dropout!r}"
            )
        if proj_size < 0 or (proj_size and proj_size >= hidden_size):
            raise ValueError(f"{name}: proj_size must be 0 or in [1, hidden_size), got {proj_size}")
        if proj_size:
            # MegEngine 1.13 accepts proj_size but lays out no projection weights
            raise NotImplementedError(
                f"{name}: proj_size > 0 (LSTM projections) is not supported by the facade; "
                "use proj_size=0 or add a Linear layer on the output"
            )
        if not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"{name}: num_layers must be a positive int, got {num_layers!r}")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.num_directions = 2 if bidirectional else 1
        self.proj_size = proj_size
        self.cells = [
            [self._create_cell(layer) for _ in range(self.num_directions)]
            for layer in range(num_layers)
        ]
        g = self._num_chunks * hidden_size
        size = sum(
            cell.weight_ih.shape[1] + cell.weight_hh.shape[1] + (2 if bias else 0)
            for row in self.cells
            for cell in row
        )
        self._flatten_weights = Parameter(np.zeros((g, size), dtype=np.float32))
        self.reset_parameters()

    def _layer_input_size(self, layer: int) -> int:
        return self.input_size if layer == 0 else self.num_directions * self.hidden_size

    def _create_cell(self, layer: int) -> Any:
        raise NotImplementedError

    def reset_parameters(self) -> None:
        """Every parameter uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]."""
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _weights(self):
        """Per (layer, direction): (w_ih, w_hh, b_ih, b_hh) as views of _flatten_weights in
        its memory order (so gradients flow into the one packed parameter)."""
        flat = self._flatten_weights.reshape(-1)
        g = self._num_chunks * self.hidden_size
        off = 0

        def take(n, shape):
            nonlocal off
            piece = flat[off : off + n].reshape(shape)
            off += n
            return piece

        out = []
        for layer in range(self.num_layers):
            row = []
            for _ in range(self.num_directions):
                n_in = self._layer_input_size(layer)
                w_ih = take(g * n_in, (g, n_in))
                w_hh = take(g * self.hidden_size, (g, self.hidden_size))
                if self.bias:
                    b_ih, b_hh = take(g, (g,)), take(g, (g,))
                else:
                    b_ih = b_hh = None
                row.append((w_ih, w_hh, b_ih, b_hh))
            out.append(row)
        return out

    def _state_shape(self, batch: int) -> tuple:
        return (self.num_directions * self.num_layers, batch, self.hidden_size)

    def _run(self, x, states: list, step):
        """Run every layer and direction over x (seq, batch, feature); `states[k]` is the
        initial state tuple of layer*D + direction; returns (output, final state tuples)."""
        weights = self._weights()
        finals = []
        seq_len = x.shape[0]
        for layer in range(self.num_layers):
            outs = []
            for d in range(self.num_directions):
                state = states[layer * self.num_directions + d]
                w = weights[layer][d]
                steps = range(seq_len) if d == 0 else range(seq_len - 1, -1, -1)
                ys: list = [None] * seq_len
                for t in steps:
                    state = step(x[t], state, w)
                    ys[t] = state[0]
                finals.append(state)
                outs.append(F.stack(ys, axis=0))
            x = outs[0] if len(outs) == 1 else F.concat(outs, axis=2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = _Fnn.dropout(x, self.dropout, training=True)
        return x, finals

    def _check_input(self, x) -> None:
        name = type(self).__name__
        if x.ndim != 3 or x.shape[2] != self.input_size:
            order = "(batch, seq, " if self.batch_first else "(seq, batch, "
            raise ValueError(
                f"{name}: input must have shape {order}{self.input_size}), got {tuple(x.shape)}"
            )

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002 (MegEngine's name)
        self._check_input(input)
        x = input.transpose((1, 0, 2)) if self.batch_first else input
        output, state = self._apply(x, hx, x.shape[1])
        if self.batch_first:
            output = output.transpose((1, 0, 2))
        return output, state

    def _apply(self, x, hx, batch: int) -> Any:
        raise NotImplementedError


class RNN(_RNNBase):
    """A multi-layer Elman RNN: each layer computes
    h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh) (`nonlinearity="relu"`: ReLU).

    Input (seq, batch, input_size) ((batch, seq, input_size) with `batch_first=True`);
    `hx` (D * num_layers, batch, hidden_size) defaults to zeros (D = 2 when
    bidirectional). Returns `(output, h_n)`: output (seq, batch, D * hidden_size)
    (batch first with `batch_first=True`), h_n like hx. `dropout` drops the outputs of
    every layer but the last in training mode.

    >>> import tapegrad.compat.megengine.module as M
    >>> out, h = M.RNN(3, 4, batch_first=True)(mge.tensor(np.ones((2, 5, 3), "float32")))
    >>> out.shape, h.shape
    ((2, 5, 4), (1, 2, 4))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        _check_nonlinearity("RNN", self.nonlinearity)
        super().__init__(*args, **kwargs)

    def _create_cell(self, layer: int) -> Any:
        return RNNCell(
            self._layer_input_size(layer), self.hidden_size, self.bias, self.nonlinearity
        )

    def _apply(self, x, hx, batch: int) -> Any:
        shape = self._state_shape(batch)
        if hx is None:
            hx = F.zeros(shape)
        _check_shape("RNN", "hx", hx, shape)
        nl = self.nonlinearity

        def step(xt, state, w):
            return (_rnn_step(nl, xt, state[0], *w),)

        output, finals = self._run(x, [(hx[k],) for k in range(shape[0])], step)
        return output, F.stack([s[0] for s in finals], axis=0)


class LSTM(_RNNBase):
    """A multi-layer LSTM (gates i, f, g, o; c_t = f * c_(t-1) + i * g, h_t = o * tanh(c_t)).

    Input as `RNN`; `hx = (h_0, c_0)`, each (D * num_layers, batch, hidden_size), defaults
    to zeros. Returns `(output, (h_n, c_n))`.

    >>> import tapegrad.compat.megengine.module as M
    >>> out, (h, c) = M.LSTM(3, 4)(mge.tensor(np.ones((5, 2, 3), "float32")))
    >>> out.shape, h.shape, c.shape
    ((5, 2, 4), (1, 2, 4), (1, 2, 4))
    """

    _num_chunks = 4

    def _create_cell(self, layer: int) -> Any:
        return LSTMCell(self._layer_input_size(layer), self.hidden_size, self.bias)

    def _apply(self, x, hx, batch: int) -> Any:
        shape = self._state_shape(batch)
        if hx is None:
            h0, c0 = F.zeros(shape), F.zeros(shape)
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"LSTM: hx must be a pair (h_0, c_0), each of shape {shape}")
            h0, c0 = hx
        _check_shape("LSTM", "h_0", h0, shape)
        _check_shape("LSTM", "c_0", c0, shape)

        def step(xt, state, w):
            return _lstm_step(xt, state[0], state[1], *w)

        output, finals = self._run(x, [(h0[k], c0[k]) for k in range(shape[0])], step)
        return output, (
            F.stack([s[0] for s in finals], axis=0),
            F.stack([s[1] for s in finals], axis=0),
        )
