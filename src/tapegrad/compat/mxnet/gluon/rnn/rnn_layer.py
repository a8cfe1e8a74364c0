"""Gluon's fused recurrent layers (MXNet 1.9.1): `RNN`, `LSTM` and `GRU` over a whole
sequence, several layers and optionally both directions.

Parameters are named as MXNet names them (`l0_i2h_weight`, `r0_h2h_bias`, ... after the
layer's prefix) and hold the gates in MXNet's order (see rnn_cell.py), so weights load
from MXNet files and match a stack of cells (`_unfuse()`). The input projections of all
time steps are one matrix product per layer and direction; the recurrence runs a step at
a time.

    >>> x = mx.nd.ones((5, 4, 8))                     # layout "TNC": (time, batch, feature)
    >>> gru = mx.gluon.rnn.GRU(16, num_layers=2)
    >>> gru.initialize()
    >>> out, [h] = gru(x, gru.begin_state(batch_size=4))
    >>> out.shape, h.shape
    ((5, 4, 16), (2, 4, 16))
"""

from __future__ import annotations

from .....autograd.record import is_training
from ..block import HybridBlock, block_args
from . import rnn_cell

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
# MXNet 1.9.1 options the facade refuses unless left at their defaults
_NOT_PROVIDED = (
    "state_clip_min",
    "state_clip_max",
    "state_clip_nan",
    "use_sequence_length",
)


def _tg():
    import tapegrad

    return tapegrad


class _RNNLayer(HybridBlock):
    """What RNN, LSTM and GRU share; `mode` is "rnn_relu", "rnn_tanh", "lstm" or "gru"."""

    def __init__(
        self,
        hidden_size,
        num_layers,
        layout,
        dropout,
        bidirectional,
        input_size,
        i2h_weight_initializer,
        h2h_weight_initializer,
        i2h_bias_initializer,
        h2h_bias_initializer,
        mode,
        dtype,
        kwargs,
        projection_size=None,
        h2r_weight_initializer=None,
    ) -> None:
        name = type(self).__name__
        if layout not in ("TNC", "NTC"):
            raise ValueError(f"{name}: layout must be 'TNC' or 'NTC', got {layout!r}")
        for option in _NOT_PROVIDED:
            if kwargs.get(option):
                raise ValueError(f"{name}({option}=...) is not supported by the MXNet facade")
        unknown = set(kwargs) - {"prefix", "params", *_NOT_PROVIDED}
        if unknown:
            raise TypeError(f"{name}: unexpected keyword arguments {sorted(unknown)}")
        super().__init__(**block_args(kwargs))
        self._hidden_size, self._num_layers, self._layout = hidden_size, num_layers, layout
        self._dropout, self._dir, self._input_size = dropout, 2 if bidirectional else 1, input_size
        self._mode, self._gates = mode, _GATES[mode]
        self._inits = {
            "i2h_weight_initializer": i2h_weight_initializer,
            "h2h_weight_initializer": h2h_weight_initializer,
            "i2h_bias_initializer": i2h_bias_initializer,
            "h2h_bias_initializer": h2h_bias_initializer,
        }
        self._projection_size = projection_size
        self._inits["h2r_weight_initializer"] = h2r_weight_initializer
        rows = self._gates * hidden_size
        out_size = projection_size or hidden_size  # each direction's output (and recurrence)
        kinds = [
            ("i2h_weight", None),
            ("h2h_weight", (rows, out_size)),
            ("i2h_bias", (rows,)),
            ("h2h_bias", (rows,)),
        ]
        if projection_size:
            kinds.insert(2, ("h2r_weight", (projection_size, hidden_size)))
        in_size = input_size
        for layer in range(num_layers):
            for d in ("l", "r")[: self._dir]:
                for kind, shape in kinds:
                    shape = shape or (rows, in_size)
                    name = f"{d}{layer}_{kind}"
                    param = self.params.get(
                        name,
                        shape=shape,
                        dtype=dtype,
                        init=self._inits[kind + "_initializer"],
                        allow_deferred_init=True,
                    )
                    setattr(self, name, param)
            in_size = out_size * self._dir

    @classmethod
    def _alias(cls) -> str:
        return cls.__name__.lower()

    def state_info(self, batch_size=0):
        """One (or, for LSTM, two: h and c) state of shape (layers * directions, N, hidden);
        with a projection, h is (layers * directions, N, projection)."""
        lead = (self._num_layers * self._dir, batch_size)
        sizes = [self._projection_size or self._hidden_size, self._hidden_size]
        return [{"shape": (*lead, size), "__layout__": "LNC"} for size in sizes[: self._n_states]]

    @property
    def _n_states(self) -> int:
        return 2 if self._mode == "lstm" else 1

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """Zero initial states (or made by `func(shape=..., **kwargs)`)."""
        return [
            rnn_cell._zeros(info["shape"], **kwargs)
            if func is None
            else func(shape=info["shape"], **kwargs)
            for info in self.state_info(batch_size)
        ]

    def infer_shape(self, inputs, *states) -> None:
        """Give the first layer's input weights their input size from `inputs` (and
        initialize what was deferred), as the first forward would."""
        self._finish_params(inputs.shape[2])

    def _finish_params(self, in_features: int) -> None:
        for d in ("l", "r")[: self._dir]:
            w = self._reg_params[f"{d}0_i2h_weight"]
            if w._var is None and w.shape[1] == 0:
                w.shape = (w.shape[0], in_features)
        for p in self._reg_params.values():
            p._finish_deferred_init()

    def _unfuse(self):
        """The same network as a HybridSequentialRNNCell of cells sharing these parameters
        (prefixes l0_, r0_, ...; BidirectionalCell for two directions)."""
        mode = self._mode

        def cell(prefix, input_size):
            kw = dict(self._inits, input_size=input_size, prefix=prefix)
            h2r = kw.pop("h2r_weight_initializer")
            if self._projection_size:
                from ..contrib.rnn import LSTMPCell

                return LSTMPCell(
                    self._hidden_size, self._projection_size, h2r_weight_initializer=h2r, **kw
                )
            if mode == "lstm":
                return rnn_cell.LSTMCell(self._hidden_size, **kw)
            if mode == "gru":
                return rnn_cell.GRUCell(self._hidden_size, **kw)
            return rnn_cell.RNNCell(self._hidden_size, activation=mode[4:], **kw)

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            in_size = self._input_size
            for layer in range(self._num_layers):
                if self._dir == 2:
                    stack.add(
                        rnn_cell.BidirectionalCell(
                            cell(f"l{layer}_", in_size), cell(f"r{layer}_", in_size)
                        )
                    )
                else:
                    stack.add(cell(f"l{layer}_", in_size))
                if self._dropout > 0 and layer != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                in_size = (self._projection_size or self._hidden_size) * self._dir
        return stack

    def _weights(self, prefix):
        return tuple(
            self._reg_params[prefix + n].data()
            for n in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")
        )

    def _projection(self, prefix):
        if not self._projection_size:
            return None
        return self._reg_params[prefix + "h2r_weight"].data()

    def _direction(self, x, states, prefix, reverse):
        """One direction of one layer over x (T, N, I): (outputs (T, N, H), final states)."""
        tg = _tg()
        wi, wh, bi, bh = self._weights(prefix)
        wr = self._projection(prefix)
        gru = self._mode == "gru"
        # every step's input projection at once; GRU keeps h2h's bias inside its reset gate
        xw = tg.matmul(x, wi.T) + (bi if gru else bi + bh)
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outs = [None] * x.shape[0]
        h, c = states[0], states[1] if len(states) > 1 else None
        for t in steps:
            if gru:
                h = rnn_cell.gru_step(xw[t], tg.matmul(h, wh.T) + bh, h)
            elif c is not None:
                h, c = rnn_cell.lstm_step(xw[t] + tg.matmul(h, wh.T), c)
                if wr is not None:  # LSTMP: the output and the recurrence are W_hr h
                    h = tg.matmul(h, wr.T)
            else:
                pre = xw[t] + tg.matmul(h, wh.T)
                h = tg.relu(pre) if self._mode == "rnn_relu" else tg.tanh(pre)
            outs[t] = h
        return tg.stack(outs, dim=0), ([h] if c is None else [h, c])

    def _check_states(self, states, batch_size):
        tg_tensor = _tg().Tensor
        if isinstance(states, tg_tensor):
            states = [states]
        states = list(states)
        infos = self.state_info(batch_size)
        if len(states) != len(infos):
            raise ValueError(
                f"{type(self).__name__}: expected {len(infos)} recurrent state arrays, got "
                f"{len(states)}"
            )
        for state, info in zip(states, infos, strict=True):
            if tuple(state.shape) != info["shape"]:
                raise ValueError(
                    f"Invalid recurrent state shape. Expecting {info['shape']}, got "
                    f"{tuple(state.shape)}."
                )
        return states

    def forward(self, inputs, states=None):
        tg = _tg()
        x = tg.swapaxes(inputs, 0, 1) if self._layout == "NTC" else inputs  # (T, N, C)
        given = states is not None
        states = self._check_states(states, x.shape[1]) if given else self.begin_state(x.shape[1])
        self._finish_params(x.shape[2])
        finals = [[] for _ in states]  # per state kind: one final array per (layer, direction)
        for layer in range(self._num_layers):
            outs = []
            for k, d in enumerate(("l", "r")[: self._dir]):
                idx = layer * self._dir + k
                out, last = self._direction(x, [s[idx] for s in states], f"{d}{layer}_", d == "r")
                outs.append(out)
                for kept, s in zip(finals, last, strict=True):
                    kept.append(s)
            x = outs[0] if self._dir == 1 else tg.cat(outs, dim=-1)
            if self._dropout and layer < self._num_layers - 1 and is_training():
                x = tg.nn.functional.dropout(x, p=self._dropout, training=True)
        out = tg.swapaxes(x, 0, 1) if self._layout == "NTC" else x
        if not given:
            return out
        return out, [tg.stack(s, dim=0) for s in finals]

    def _repr_body(self) -> str:
        shape = self._reg_params["l0_i2h_weight"].shape
        body = f"{shape[1] if shape[1] else None} -> {self._hidden_size}, {self._layout}"
        if self._num_layers != 1:
            body += f", num_layers={self._num_layers}"
        if self._dropout:
            body += f", dropout={self._dropout}"
        if self._dir == 2:
            body += ", bidirectional"
        return body


class RNN(_RNNLayer):
    """A multi-layer Elman RNN: h' = activation(W_i x + b_i + W_h h + b_h), `activation`
    "relu" (MXNet's default for the layer) or "tanh".

    Args:
        hidden_size: size of h. num_layers: stacked layers. activation: "relu" or "tanh".
        layout: "TNC" (default) or "NTC". dropout: between layers, in training.
        bidirectional: a reverse direction too (outputs concatenated). input_size: 0
        infers it from the first input.

    Called as `rnn(x)` it returns the output sequence; `rnn(x, states)` with
    `states = [h0]` (or h0 alone), (num_layers * directions, N, hidden), returns
    `(output, [h])`.
    """

    def __init__(
        self,
        hidden_size,
        num_layers=1,
        activation="relu",
        layout="TNC",
        dropout=0,
        bidirectional=False,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        input_size=0,
        dtype="float32",
        **kwargs,
    ) -> None:
        if activation not in ("relu", "tanh"):
            raise ValueError(f"RNN: activation must be 'relu' or 'tanh', got {activation!r}")
        super().__init__(
            hidden_size,
            num_layers,
            layout,
            dropout,
            bidirectional,
            input_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            "rnn_" + activation,
            dtype,
            kwargs,
        )


class LSTM(_RNNLayer):
    """A multi-layer (optionally bidirectional) LSTM; gates i, f, g, o as LSTMCell's.

    Args: as RNN's (no activation). Called as `lstm(x)` it returns the output sequence;
    `lstm(x, [h0, c0])` (each (num_layers * directions, N, hidden)) returns
    `(output, [h, c])`. `projection_size=P`: each step's output and recurrent state is
    W_hr h (contrib.rnn.LSTMPCell's), so h is (num_layers * directions, N, P).
    """

    def __init__(
        self,
        hidden_size,
        num_layers=1,
        layout="TNC",
        dropout=0,
        bidirectional=False,
        input_size=0,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        projection_size=None,
        h2r_weight_initializer=None,
        dtype="float32",
        **kwargs,
    ) -> None:
        super().__init__(
            hidden_size,
            num_layers,
            layout,
            dropout,
            bidirectional,
            input_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            "lstm",
            dtype,
            kwargs,
            projection_size,
            h2r_weight_initializer,
        )


class GRU(_RNNLayer):
    """A multi-layer (optionally bidirectional) GRU; gates r, z, n as GRUCell's.

    Args: as RNN's (no activation). Called as `gru(x)` it returns the output sequence;
    `gru(x, [h0])` returns `(output, [h])`.
    """

    def __init__(
        self,
        hidden_size,
        num_layers=1,
        layout="TNC",
        dropout=0,
        bidirectional=False,
        input_size=0,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        dtype="float32",
        **kwargs,
    ) -> None:
        super().__init__(
            hidden_size,
            num_layers,
            layout,
            dropout,
            bidirectional,
            input_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            "gru",
            dtype,
            kwargs,
        )
