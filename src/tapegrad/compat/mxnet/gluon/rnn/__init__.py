"""`mx.gluon.rnn`: the LSTM layer (MXNet's parameter names and gate order i, f, g, o).

>>> x = mx.np.ones((5, 4, 8))
>>> lstm = mx.gluon.rnn.LSTM(16, num_layers=2)   # layout "TNC": (time, batch, feature)
>>> lstm.initialize()
>>> out, (h, c) = lstm(x, lstm.begin_state(batch_size=4))
"""

from __future__ import annotations

from .....autograd.record import is_training
from ...._facade import facade_getattr
from ..block import HybridBlock, block_args

__all__ = ["LSTM"]


def _tg():
    import tapegrad

    return tapegrad


class LSTM(HybridBlock):
    """A multi-layer (optionally bidirectional) LSTM over a whole sequence.

    Args:
        hidden_size: size of h and c. num_layers: stacked layers. layout: "TNC" (default)
        or "NTC". dropout: dropout between layers in training mode. bidirectional: run a
        reverse direction too (outputs concatenated). input_size: 0 infers it.

    Called as `lstm(x)` it returns the output sequence; `lstm(x, states)` with
    `states = [h0, c0]` (each (num_layers * directions, N, hidden)) returns
    `(output, [h, c])`.
    """

    def __init__(
        self,
        hidden_size,
        num_layers=1,
        layout="TNC",
        dropout=0.0,
        bidirectional=False,
        input_size=0,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        dtype="float32",
        **kwargs,
    ) -> None:
        super().__init__(**block_args(kwargs))
        if layout not in ("TNC", "NTC"):
            raise ValueError(f"LSTM: layout must be 'TNC' or 'NTC', got {layout!r}")
        if kwargs.get("projection_size"):
            raise ValueError("LSTM(projection_size=...) is not supported by the MXNet facade")
        self._hidden, self._layers, self._layout = hidden_size, num_layers, layout
        self._dropout, self._dirs = dropout, 2 if bidirectional else 1
        h4 = 4 * hidden_size
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else hidden_size * self._dirs
            for d in ("l", "r")[: self._dirs]:
                p = f"{d}{layer}_"
                for name, shape, init in (
                    ("i2h_weight", (h4, in_size), i2h_weight_initializer),
                    ("h2h_weight", (h4, hidden_size), h2h_weight_initializer),
                    ("i2h_bias", (h4,), i2h_bias_initializer),
                    ("h2h_bias", (h4,), h2h_bias_initializer),
                ):
                    setattr(
                        self,
                        p + name,
                        self.params.get(
                            p + name, shape=shape, dtype=dtype, init=init, allow_deferred_init=True
                        ),
                    )

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """Zero initial states [h0, c0], each (num_layers * directions, N, hidden)."""
        from .....tensor import as_class
        from ...numpy_extension import array_class

        tg = _tg()
        shape = (self._layers * self._dirs, batch_size, self._hidden)
        return [as_class(tg.zeros(shape), array_class()) for _ in range(2)]

    def _cell_run(self, x, h, c, prefix, reverse):
        """One direction of one layer over the whole sequence x (T, N, I)."""
        tg = _tg()
        w_i = self._reg_params[prefix + "i2h_weight"]
        if w_i._var is None:
            w_i.shape = (4 * self._hidden, x.shape[-1])
            w_i._finish_deferred_init()
        params = [
            self._reg_params[prefix + n]
            for n in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")
        ]
        for p in params:
            p._finish_deferred_init()
        wi, wh, bi, bh = (p.data() for p in params)
        xw = tg.matmul(x, wi.T) + (bi + bh)  # every time step's input projection at once
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outs = [None] * x.shape[0]
        for t in steps:
            gates = xw[t] + tg.matmul(h, wh.T)
            i, f, g, o = tg.chunk(gates, 4, dim=-1)
            c = tg.sigmoid(f) * c + tg.sigmoid(i) * tg.tanh(g)
            h = tg.sigmoid(o) * tg.tanh(c)
            outs[t] = h
        return tg.stack(outs, dim=0), h, c

    def forward(self, inputs, states=None):
        tg = _tg()
        x = tg.swapaxes(inputs, 0, 1) if self._layout == "NTC" else inputs
        given = states is not None
        if not given:
            states = self.begin_state(x.shape[1])
        h0, c0 = states
        hs, cs = [], []
        for layer in range(self._layers):
            outs = []
            for k, d in enumerate(("l", "r")[: self._dirs]):
                idx = layer * self._dirs + k
                out, h, c = self._cell_run(x, h0[idx], c0[idx], f"{d}{layer}_", d == "r")
                outs.append(out)
                hs.append(h)
                cs.append(c)
            x = outs[0] if self._dirs == 1 else tg.cat(outs, dim=-1)
            if self._dropout and layer < self._layers - 1 and is_training():
                x = tg.nn.functional.dropout(x, p=self._dropout, training=True)
        out = tg.swapaxes(x, 0, 1) if self._layout == "NTC" else x
        if not given:
            return out
        return out, [tg.stack(hs, dim=0), tg.stack(cs, dim=0)]

    def _repr_body(self) -> str:
        return f"hidden_size={self._hidden}, num_layers={self._layers}, layout={self._layout}"


__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.gluon.rnn)",
    {},
    {
        name: "only the LSTM layer is provided; write the cell with mx.np operations"
        for name in ("LSTMCell", "GRUCell", "RNNCell", "SequentialRNNCell", "GRU", "RNN")
    },
)
