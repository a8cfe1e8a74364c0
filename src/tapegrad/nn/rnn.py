"""Recurrent layers: RNN, LSTM, GRU and their cells, with PyTorch's arguments, parameter
names (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, ..._reverse), gate order
(LSTM: i, f, g, o; GRU: r, z, n) and initialisation, so PyTorch weights load as they are.

The time loop is plain Python over tensor ops (a dynamic graph: sequences of any length,
control flow as you like). Per layer and direction, the input projection of every time
step is one GEMM; each step adds one (N, H) x (H, G*H) GEMM.

    >>> import tapegrad as tg
    >>> lstm = tg.nn.LSTM(10, 20, num_layers=2, batch_first=True)
    >>> out, (h, c) = lstm(tg.randn(3, 5, 10))
    >>> out.shape, h.shape
    ((3, 5, 20), (2, 3, 20))
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..creation import tensor, uniform, zeros
from ..ops.elementwise import relu, sigmoid, tanh, where
from ..ops.shape import cat, stack
from ..tensor import Tensor
from . import functional_core as F
from .module import Module, Parameter
from .utils import rnn as rnn_utils
from .utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ---------------------------------------------------------------- splitting as one node
# Slicing a tensor k times makes k graph nodes whose gradients are each a full-size array of
# zeros around the slice, summed by the engine: O(k^2) work for the k time steps of a
# sequence. These split into k outputs of ONE node whose backward is a single stack/concat.
class _Unbind(Function):
    @staticmethod
    def forward(ctx, x):
        return tuple(x[t] for t in range(x.shape[0]))

    @staticmethod
    def jvp(ctx, tangent):  # linear: the tangent splits the same way
        return tuple(tangent[t] for t in range(tangent.shape[0]))

    @staticmethod
    def backward(ctx, *grads):
        return stack(grads, 0)


class _Chunk(Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        n = x.shape[-1] // k
        return tuple(x[..., i * n : (i + 1) * n] for i in range(k))

    @staticmethod
    def jvp(ctx, tangent, _):  # linear: the tangent splits the same way
        n = tangent.shape[-1] // ctx.k
        return tuple(tangent[..., i * n : (i + 1) * n] for i in range(ctx.k))

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, -1), None


# ---------------------------------------------------------------- one time step
# gi: the input projection x @ W_ih^T + b_ih of this step (computed for all steps at once)
def _rnn_step(act, gi, h, w_hh, b_hh):
    return act(gi + F.linear(h, w_hh, b_hh))


def _lstm_step(gi, state, w_hh, b_hh):
    h, c = state
    i, f, g, o = _Chunk.apply(gi + F.linear(h, w_hh, b_hh), 4)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    return h, c


def _gru_step(gi, h, w_hh, b_hh):
    i_r, i_z, i_n = _Chunk.apply(gi, 3)
    h_r, h_z, h_n = _Chunk.apply(F.linear(h, w_hh, b_hh), 3)
    r = sigmoid(i_r + h_r)
    z = sigmoid(i_z + h_z)
    cand = tanh(i_n + r * h_n)
    return cand + z * (h - cand)  # (1 - z) * n + z * h


def _step_fn(mode):
    if mode == "LSTM":
        return _lstm_step
    if mode == "GRU":
        return _gru_step
    act = tanh if mode == "RNN_TANH" else relu
    return lambda gi, h, w, b: _rnn_step(act, gi, h, w, b)


def _init_params(module, shapes, hidden_size, dtype, device):
    """Every weight and bias U(-1/sqrt(hidden), 1/sqrt(hidden)), as PyTorch."""
    bound = 1.0 / math.sqrt(hidden_size)
    for name, shape in shapes:
        setattr(
            module,
            name,
            Parameter(uniform(-bound, bound, size=shape, dtype=dtype, device=device or "cpu")),
        )


def _check_sizes(cls, sizes):
    """Each (name, value) of `sizes` must be a positive int (bools are not sizes)."""
    for name, v in sizes:
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise ValueError(f"{cls}: {name} must be a positive int, got {v!r}")


def _suffix(layer, d):
    """Parameter-name suffix of a layer and direction, as PyTorch: _l0, _l0_reverse ..."""
    return f"_l{layer}" + ("_reverse" if d else "")


def _check_hidden(h, shape, what, cls):
    if not isinstance(h, Tensor):
        raise TypeError(f"{cls}: {what} must be a Tensor, got {type(h).__name__}")
    if tuple(h.shape) != tuple(shape):
        raise ValueError(f"{cls}: expected {what} of shape {tuple(shape)}, got {tuple(h.shape)}")


# ---------------------------------------------------------------- multi-layer modules
class RNNBase(Module):
    """Shared body of RNN, LSTM and GRU (see those for the arguments)."""

    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        cls = type(self).__name__
        _check_sizes(
            cls,
            (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers)),
        )
        if not 0.0 <= float(dropout) <= 1.0 or isinstance(dropout, bool):
            raise ValueError(f"{cls}: dropout must be a number in [0, 1], got {dropout!r}")
        if proj_size:
            raise NotImplementedError(f"{cls}: proj_size is not supported")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = 0
        gates = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        shapes = []
        for layer in range(num_layers):
            width = input_size if layer == 0 else hidden_size * dirs
            for d in range(dirs):
                sfx = _suffix(layer, d)
                shapes += [
                    ("weight_ih" + sfx, (gates, width)),
                    ("weight_hh" + sfx, (gates, hidden_size)),
                ]
                if bias:
                    shapes += [("bias_ih" + sfx, (gates,)), ("bias_hh" + sfx, (gates,))]
        _init_params(self, shapes, hidden_size, dtype, device)

    def flatten_parameters(self) -> None:
        """No-op (PyTorch compacts cuDNN weights here)."""

    @property
    def _flat_weights_names(self):
        return [name for name, _ in self.named_parameters(recurse=False)]

    @property
    def all_weights(self):
        """The parameters, one list per layer and direction (PyTorch's order)."""
        dirs = 2 if self.bidirectional else 1
        out = []
        for layer in range(self.num_layers):
            for d in range(dirs):
                sfx = _suffix(layer, d)
                names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if self.bias else [])
                out.append([getattr(self, n + sfx) for n in names])
        return out

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def _layer_params(self, layer, d):
        sfx = _suffix(layer, d)
        b_ih = getattr(self, "bias_ih" + sfx) if self.bias else None
        b_hh = getattr(self, "bias_hh" + sfx) if self.bias else None
        return getattr(self, "weight_ih" + sfx), b_ih, getattr(self, "weight_hh" + sfx), b_hh

    def forward(self, input, hx=None):
        """(output, h_n) (LSTM: (output, (h_n, c_n))). A PackedSequence input
        (nn.utils.rnn) gives a PackedSequence output, and each sequence's h_n is the state
        after its own last step."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        cls = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{cls}: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in (2, 3):
            layout = "(N, L, H_in)" if self.batch_first else "(L, N, H_in)"
            raise ValueError(
                f"{cls}: expected input with 3 dims {layout} or 2 dims (L, H_in), "
                f"got shape {tuple(input.shape)}"
            )
        self._check_features(input)
        unbatched = input.ndim == 2
        x = (
            input.unsqueeze(1)
            if unbatched
            else (input.swapaxes(0, 1) if self.batch_first else input)
        )
        if x.shape[0] == 0:
            raise ValueError(f"{cls}: the input sequence is empty (shape {tuple(input.shape)})")
        h0, c0 = self._initial_state(hx, self._hidden_shape(x), unbatched, x, cls)
        x, h_n, c_n = self._run(x, h0, c0, None)
        out = x.squeeze(1) if unbatched else (x.swapaxes(0, 1) if self.batch_first else x)
        if unbatched:
            h_n = h_n.squeeze(1)
            c_n = None if c_n is None else c_n.squeeze(1)
        return (out, h_n) if c_n is None else (out, (h_n, c_n))

    def _forward_packed(self, packed, hx):
        cls = type(self).__name__
        self._check_features(packed.data)
        x = rnn_utils.padded_sorted(packed)  # (T, B, H_in), longest sequence first
        running = rnn_utils.sorted_lengths(packed)[None, :] > np.arange(x.shape[0])[:, None]
        order, back = packed.sorted_indices, packed.unsorted_indices
        if hx is not None and order is not None:  # the caller's states are in batch order
            hx = tuple(h[:, order] for h in hx) if self.mode == "LSTM" else hx[:, order]
        h0, c0 = self._initial_state(hx, self._hidden_shape(x), False, x, cls)
        masks = [tensor(running[t][:, None], device=x.device) for t in range(x.shape[0])]
        x, h_n, c_n = self._run(x, h0, c0, masks)
        out = rnn_utils.PackedSequence(
            rnn_utils.packed_data(x, packed), packed.batch_sizes, order, back
        )
        if back is not None:
            h_n = h_n[:, back]
            c_n = None if c_n is None else c_n[:, back]
        return (out, h_n) if c_n is None else (out, (h_n, c_n))

    def _check_features(self, x):
        if x.shape[-1] != self.input_size:
            raise ValueError(
                f"{type(self).__name__}: input has {x.shape[-1]} features (shape "
                f"{tuple(x.shape)}) but input_size is {self.input_size}"
            )

    def _hidden_shape(self, x):
        dirs = 2 if self.bidirectional else 1
        return (self.num_layers * dirs, x.shape[1], self.hidden_size)

    def _run(self, x, h0, c0, masks):
        """Every layer and direction over time-major `x` (T, B, H_in): (output, h_n, c_n).

        masks: per step, a (B, 1) bool tensor of the sequences still running (packed input),
        or None. A finished sequence keeps its state through the remaining steps, so going
        forward its state stops at its last step, and going backward it starts there."""
        seq_len = x.shape[0]
        dirs = 2 if self.bidirectional else 1
        is_lstm = self.mode == "LSTM"
        step = _step_fn(self.mode)
        training = self.is_training_now
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                w_ih, b_ih, w_hh, b_hh = self._layer_params(layer, d)
                gi = _Unbind.apply(F.linear(x, w_ih, b_ih))  # all time steps in one GEMM
                k = layer * dirs + d
                state = (h0[k], c0[k]) if is_lstm else h0[k]
                seq = [None] * seq_len
                for t in range(seq_len - 1, -1, -1) if d else range(seq_len):
                    new = step(gi[t], state, w_hh, b_hh)
                    if masks is not None:
                        keep = masks[t]
                        new = (
                            tuple(where(keep, a, b) for a, b in zip(new, state))
                            if is_lstm
                            else where(keep, new, state)
                        )
                    state = new
                    seq[t] = state[0] if is_lstm else state
                outs.append(stack(seq, 0))
                h_n.append(state[0] if is_lstm else state)
                if is_lstm:
                    c_n.append(state[1])
            x = outs[0] if dirs == 1 else cat(outs, -1)
            if self.dropout and training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, training=True)
        return x, stack(h_n, 0), (stack(c_n, 0) if is_lstm else None)

    def _initial_state(self, hx, hshape, unbatched, x, cls):
        is_lstm = self.mode == "LSTM"
        if hx is None:
            z = zeros(*hshape, dtype=x.dtype, device=x.device)
            return z, z
        if is_lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"{cls}: hx must be a tuple (h0, c0), got {type(hx).__name__}")
            h0, c0 = hx
        else:
            h0, c0 = hx, None
        want = (hshape[0], hshape[2]) if unbatched else hshape
        _check_hidden(h0, want, "h0", cls)
        if is_lstm:
            _check_hidden(c0, want, "c0", cls)
        if unbatched:
            h0 = h0.unsqueeze(1)
            c0 = c0.unsqueeze(1) if is_lstm else None
        return h0, c0


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    Args: input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0 (between layers, in training), bidirectional=False.
    `forward(input, h0=None) -> (output, h_n)`; input (L, N, H_in) or (N, L, H_in) with
    batch_first, output (..., D*H), h_n (D*num_layers, N, H).
    `out, h = tg.nn.RNN(4, 8)(tg.randn(5, 2, 4))`."""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        nonlinearity="tanh",
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(
            "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            device=device,
            dtype=dtype,
        )


class LSTM(RNNBase):
    """Long short-term memory, gates i, f, g, o as PyTorch.

    Same arguments as RNN (no nonlinearity). `forward(input, (h0, c0)=None) ->
    (output, (h_n, c_n))`. `out, (h, c) = tg.nn.LSTM(4, 8, batch_first=True)(tg.randn(2, 5, 4))`."""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__(
            "LSTM",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            proj_size,
            device,
            dtype,
        )


class GRU(RNNBase):
    """Gated recurrent unit, gates r, z, n as PyTorch. `forward(input, h0=None) -> (out, h_n)`."""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
    ):
        super().__init__(
            "GRU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            device=device,
            dtype=dtype,
        )


# ---------------------------------------------------------------- cells
class RNNCellBase(Module):
    """One time step of an RNN/LSTM/GRU (parameters weight_ih, weight_hh, bias_ih, bias_hh)."""

    _mode = "RNN_TANH"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        cls = type(self).__name__
        _check_sizes(cls, (("input_size", input_size), ("hidden_size", hidden_size)))
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gates = _GATES[self._mode] * hidden_size
        shapes = [("weight_ih", (gates, input_size)), ("weight_hh", (gates, hidden_size))]
        if bias:
            shapes += [("bias_ih", (gates,)), ("bias_hh", (gates,))]
        else:
            self.bias_ih = self.bias_hh = None
        _init_params(self, shapes, hidden_size, dtype, device)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")

    def _prepare(self, input, hx, n_states):
        cls = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{cls}: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(
                f"{cls}: expected input of shape (N, {self.input_size}) or "
                f"({self.input_size},), got {tuple(input.shape)}"
            )
        unbatched = input.ndim == 1
        x = input.unsqueeze(0) if unbatched else input
        shape = (x.shape[0], self.hidden_size)
        if hx is None:
            z = zeros(*shape, dtype=x.dtype, device=x.device)
            states = [z] * n_states
        else:
            states = list(hx) if n_states == 2 else [hx]
            if n_states == 2 and len(states) != 2:
                raise TypeError(f"{cls}: hx must be a tuple (h, c)")
            want = shape[1:] if unbatched else shape
            for s, what in zip(states, ("h", "c"), strict=False):
                _check_hidden(s, want, what, cls)
            if unbatched:
                states = [s.unsqueeze(0) for s in states]
        return x, states, unbatched

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._prepare(input, hx, 1)
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        h = _step_fn(self._mode)(gi, h, self.weight_hh, self.bias_hh)
        return h.squeeze(0) if unbatched else h


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu). `cell(x, h=None) -> h'`."""

    def __init__(
        self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}"
            )
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, device, dtype)


class LSTMCell(RNNCellBase):
    """One LSTM step. `h, c = cell(x, (h, c))` (zeros when omitted)."""

    _mode = "LSTM"

    def forward(self, input, hx=None):
        x, (h, c), unbatched = self._prepare(input, hx, 2)
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(gi, (h, c), self.weight_hh, self.bias_hh)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    """One GRU step. `h = cell(x, h)`."""

    _mode = "GRU"
