"""Gluon's recurrent cells (MXNet 1.9.1): one time step a call, `unroll` over a sequence.

A cell is called as `output, states = cell(x_t, states)` with x_t (N, C); `begin_state`
makes its zero states and `state_info` says their shapes. `unroll(length, inputs, ...)`
runs it over a whole sequence (an array in layout "NTC"/"TNC" or a list of steps) and
returns `(outputs, states)`: outputs merged into one array or kept as a list per
`merge_outputs` (None: as the inputs came), and, with `valid_length`, padded steps zeroed
and each sequence's own last states returned.

The gate layouts are MXNet's: LSTM i, f, g (cell input), o; GRU r (reset), z (update), n
(new), the reset gate applied after the recurrent product (cuDNN's GRU). Parameter names
are `prefix + "i2h_weight"` (and h2h_weight, i2h_bias, h2h_bias), so a stack of cells
made with the prefixes "l0_", "r0_", ... shares names with the fused `rnn.LSTM` / `GRU` /
`RNN` layers (whose `_unfuse()` builds that stack).

    >>> cell = mx.gluon.rnn.GRUCell(8)
    >>> cell.initialize()
    >>> out, states = cell.unroll(5, mx.nd.ones((2, 5, 3)), merge_outputs=True)
    >>> out.shape, states[0].shape
    ((2, 5, 8), (2, 8))
"""

from __future__ import annotations

from typing import Any

from .....autograd.record import is_training
from ..block import HybridBlock
from . import _sequence as seq

__all__ = [
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


def _tg():
    import tapegrad

    return tapegrad


def _zeros(shape, **kwargs):
    """The default `begin_state` function: zeros of the facade's current array class."""
    from .....tensor import as_class
    from ...numpy_extension import array_class

    dtype = kwargs.get("dtype") or "float32"
    return as_class(_tg().zeros(shape, dtype=dtype), array_class())


def _activation(activation, x):
    """An MXNet activation: a name ("tanh", "relu", ...), a block or any callable."""
    if isinstance(activation, str):
        from ..nn.activations import activation_fn

        return activation_fn(activation)(x)
    return activation(x)


def dropout(x, rate: float, axes=()):
    """Dropout in training (`autograd.is_training()`), one mask shared along `axes`."""
    if rate <= 0 or not is_training():
        return x
    F = _tg().nn.functional
    if not axes:
        return F.dropout(x, p=rate, training=True)
    shape = tuple(1 if a in axes else n for a, n in enumerate(x.shape))
    return x * F.dropout(_tg().ones(shape, dtype=x.dtype), p=rate, training=True)


def lstm_step(gates, c, dim=-1, activation="tanh", recurrent_activation="sigmoid"):
    """One LSTM step from the summed i2h + h2h `gates` (i, f, g, o along `dim`) and the cell
    state `c`: (h', c'). Shared by the cells, the convolutional cells and the fused layers."""
    i, f, g, o = _tg().chunk(gates, 4, dim=dim)
    c = _activation(recurrent_activation, f) * c + _activation(
        recurrent_activation, i
    ) * _activation(activation, g)
    return _activation(recurrent_activation, o) * _activation(activation, c), c


def gru_step(i2h, h2h, h, dim=-1, activation="tanh"):
    """One GRU step (cuDNN's form: the reset gate after the recurrent product) from the
    i2h and h2h products (r, z, n along `dim`) and the state `h`: h'."""
    tg = _tg()
    i_r, i_z, i_n = tg.chunk(i2h, 3, dim=dim)
    h_r, h_z, h_n = tg.chunk(h2h, 3, dim=dim)
    r, z = tg.sigmoid(i_r + h_r), tg.sigmoid(i_z + h_z)
    return (1 - z) * _activation(activation, i_n + r * h_n) + z * h


class RecurrentCell(HybridBlock):
    """Base class of the recurrent cells: override `state_info` and `forward(x, states)`.

    Args:
        prefix, params: as every Block's (the parameters' name prefix; a ParameterDict to
            share parameters with).
    """

    def __init__(self, prefix=None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._modified = False  # set while a modifier cell (ZoneoutCell ...) wraps this one

    def reset(self) -> None:
        """Forget what the previous unroll left (ZoneoutCell's previous output)."""
        for child in self._children.values():
            if isinstance(child, RecurrentCell):
                child.reset()

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        """Shape and layout of each state: `[{"shape": (N, hidden), "__layout__": "NC"}]`."""
        raise NotImplementedError(f"{type(self).__name__} must define state_info()")

    def _check_unmodified(self) -> None:
        if self._modified:
            raise RuntimeError(
                f"{type(self).__name__}: after applying a modifier cell (ZoneoutCell, "
                "ResidualCell) the base cell cannot be called directly; call the modifier "
                "cell instead"
            )

    def begin_state(self, batch_size: int = 0, func=None, **kwargs) -> list:
        """Initial states, one per `state_info` entry, made by `func(shape=..., **kwargs)`
        (default: zeros; `mx.nd.ones`, `mx.nd.random.uniform`... work too)."""
        self._check_unmodified()
        states = []
        for info in self.state_info(batch_size):
            shape = info["shape"]
            states.append(_zeros(shape, **kwargs) if func is None else func(shape=shape, **kwargs))
        return states

    def __call__(self, inputs, states):
        self._check_unmodified()
        return super().__call__(inputs, states)

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        """Run the cell over `length` steps of `inputs`; returns `(outputs, states)`.

        Args:
            length: the number of steps.
            inputs: an array (N, T, C) for layout "NTC", (T, N, C) for "TNC", or a list of
                `length` arrays (N, C).
            begin_state: the initial states (default: `begin_state(batch_size)`).
            layout: where the time axis is in `inputs` and in merged outputs.
            merge_outputs: True: one array; False: a list of steps; None: as the inputs.
            valid_length: an array of N lengths: steps past a sequence's length are zero in
                the outputs, and the states are each sequence's states at its last step.
        """
        seq.check_layout(layout, f"{type(self).__name__}.unroll")
        self.reset()
        steps, axis, batch_size = seq.format_sequence(length, inputs, layout, False)
        states = self._begin(begin_state, batch_size, steps)
        outputs, every_state = [], []
        for x in steps:
            out, states = self(x, states)
            outputs.append(out)
            if valid_length is not None:
                every_state.append(states)
        if valid_length is not None:
            tg = _tg()
            states = [
                seq.sequence_last(tg.stack(list(s), dim=0), valid_length)
                for s in zip(*every_state, strict=True)
            ]
            outputs = seq.sequence_mask(tg.stack(outputs, dim=axis), valid_length, axis)
        outputs, _, _ = seq.format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _begin(self, begin_state, batch_size, inputs):
        """The given states, or zeros of the inputs' dtype (a float64 sequence gets float64
        states, where MXNet's float32 default would meet it in a dtype error)."""
        if begin_state is not None:
            return list(begin_state)
        first = inputs if seq._is_array(inputs) else inputs[0]
        return self.begin_state(batch_size=batch_size, dtype=str(first.dtype))

    def forward(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} must define forward(inputs, states)")


HybridRecurrentCell = RecurrentCell  # every cell here may be hybridized


class _GatedCell(RecurrentCell):
    """RNNCell, LSTMCell and GRUCell: `gates * hidden` rows of i2h/h2h weights."""

    _gates = 1
    _states = 1

    def __init__(
        self,
        hidden_size,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        input_size=0,
        prefix=None,
        params=None,
        recurrent_size=None,
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        self._hidden_size, self._input_size = hidden_size, input_size
        rows = self._gates * hidden_size
        # what h2h multiplies: the hidden state, or LSTMPCell's projection of it
        recurrent = hidden_size if recurrent_size is None else recurrent_size
        for name, shape, init in (
            ("i2h_weight", (rows, input_size), i2h_weight_initializer),
            ("h2h_weight", (rows, recurrent), h2h_weight_initializer),
            ("i2h_bias", (rows,), i2h_bias_initializer),
            ("h2h_bias", (rows,), h2h_bias_initializer),
        ):
            setattr(
                self, name, self.params.get(name, shape=shape, init=init, allow_deferred_init=True)
            )

    def state_info(self, batch_size=0):
        return [
            {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}
            for _ in range(self._states)
        ]

    def _weights(self, inputs):
        """(i2h_weight, h2h_weight, i2h_bias, h2h_bias) arrays, the input size taken from
        the first input when it was left 0."""
        w = self.i2h_weight
        if w._var is None and w.shape[1] == 0:
            w.shape = (w.shape[0], inputs.shape[-1])
        params = (self.i2h_weight, self.h2h_weight, self.i2h_bias, self.h2h_bias)
        for p in params:
            p._finish_deferred_init()
        return tuple(p.data() for p in params)

    def _projections(self, inputs, h):
        """The i2h and h2h products with their biases, each (N, gates * hidden)."""
        F = _tg().nn.functional
        wi, wh, bi, bh = self._weights(inputs)
        return F.linear(inputs, wi, bi), F.linear(h, wh, bh)

    def _repr_body(self) -> str:
        shape = self.i2h_weight.shape
        return f"{shape[1] if shape[1] else None} -> {shape[0]}"


class RNNCell(_GatedCell):
    """Elman cell: h' = activation(W_i x + b_i + W_h h + b_h) (`activation` "tanh" by
    default, or "relu", "sigmoid", "softsign", a block or a callable)."""

    def __init__(
        self,
        hidden_size,
        activation="tanh",
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        input_size=0,
        prefix=None,
        params=None,
    ) -> None:
        super().__init__(
            hidden_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            input_size,
            prefix,
            params,
        )
        self._activation = activation

    @classmethod
    def _alias(cls) -> str:
        return "rnn"

    def forward(self, inputs, states):
        i2h, h2h = self._projections(inputs, states[0])
        out = _activation(self._activation, i2h + h2h)
        return out, [out]

    def _repr_body(self) -> str:
        return f"{super()._repr_body()}, {self._activation}"


class LSTMCell(_GatedCell):
    """LSTM cell; states [h, c]. Gates i, f, g, o: c' = f c + i g, h' = o act(c'), with
    `recurrent_activation` (sigmoid) on i, f, o and `activation` (tanh) on g and c'."""

    _gates = 4
    _states = 2

    def __init__(
        self,
        hidden_size,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        input_size=0,
        prefix=None,
        params=None,
        activation="tanh",
        recurrent_activation="sigmoid",
    ) -> None:
        super().__init__(
            hidden_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            input_size,
            prefix,
            params,
        )
        self._activation, self._recurrent_activation = activation, recurrent_activation

    @classmethod
    def _alias(cls) -> str:
        return "lstm"

    def forward(self, inputs, states):
        i2h, h2h = self._projections(inputs, states[0])
        h, c = lstm_step(i2h + h2h, states[1], -1, self._activation, self._recurrent_activation)
        return h, [h, c]


class GRUCell(_GatedCell):
    """GRU cell (cuDNN's form): r, z = sigmoid(i2h + h2h) per gate,
    n = tanh(i2h_n + r * h2h_n), h' = (1 - z) n + z h."""

    _gates = 3

    @classmethod
    def _alias(cls) -> str:
        return "gru"

    def forward(self, inputs, states):
        i2h, h2h = self._projections(inputs, states[0])
        out = gru_step(i2h, h2h, states[0])
        return out, [out]


class SequentialRNNCell(RecurrentCell):
    """Cells stacked: each step runs them in order, each on the previous one's output."""

    def add(self, cell) -> None:
        """Append `cell` to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return [info for c in self._children.values() for info in c.state_info(batch_size)]

    def begin_state(self, batch_size=0, func=None, **kwargs):
        self._check_unmodified()
        return [
            s
            for c in self._children.values()
            for s in c.begin_state(batch_size=batch_size, func=func, **kwargs)
        ]

    def _split_states(self, states):
        """The slice of `states` each child owns, in order."""
        p = 0
        for cell in self._children.values():
            n = len(cell.state_info())
            yield cell, list(states[p : p + n])
            p += n

    def forward(self, inputs, states):
        next_states = []
        for cell, own in self._split_states(states):
            if isinstance(cell, BidirectionalCell):
                raise NotImplementedError(
                    f"{type(self).__name__}: a BidirectionalCell in the stack cannot be "
                    "stepped; use unroll()"
                )
            inputs, own = cell(inputs, own)
            next_states.extend(own)
        return inputs, next_states

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        seq.check_layout(layout, f"{type(self).__name__}.unroll")
        self.reset()
        inputs, _, batch_size = seq.format_sequence(length, inputs, layout, None)
        states = self._begin(begin_state, batch_size, inputs)
        last = len(self._children) - 1
        next_states = []
        for i, (cell, own) in enumerate(self._split_states(states)):
            inputs, own = cell.unroll(
                length,
                inputs,
                begin_state=own,
                layout=layout,
                merge_outputs=merge_outputs if i == last else None,
                valid_length=valid_length,
            )
            next_states.extend(own)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self) -> int:
        return len(self._children)


class HybridSequentialRNNCell(SequentialRNNCell):
    """SequentialRNNCell; both may be hybridized here (MXNet keeps this one for that)."""


class DropoutCell(RecurrentCell):
    """Dropout on the input of each step (in training); no states of its own.

    Args:
        rate: the fraction dropped. axes: axes sharing one mask (() for none)."""

    def __init__(self, rate, axes=(), prefix=None, params=None) -> None:
        if not isinstance(rate, (int, float)):
            raise TypeError(f"DropoutCell: rate must be a number, got {type(rate).__name__}")
        super().__init__(prefix=prefix, params=params)
        self._rate, self._axes = rate, axes

    @classmethod
    def _alias(cls) -> str:
        return "dropout"

    def state_info(self, batch_size=0):
        return []

    def _drop(self, x):
        return dropout(x, self._rate, self._axes)

    def forward(self, inputs, states):
        return self._drop(inputs), states

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        seq.check_layout(layout, "DropoutCell.unroll")
        self.reset()
        inputs, _, _ = seq.format_sequence(length, inputs, layout, merge_outputs)
        if seq._is_array(inputs):
            return self._drop(inputs), list(begin_state or [])
        return super().unroll(length, inputs, begin_state, layout, merge_outputs)

    def _repr_body(self) -> str:
        return f"rate={self._rate}, axes={self._axes}"


class ModifierCell(RecurrentCell):
    """Base class of the cells that wrap another (`base_cell`) and change what it computes;
    the wrapped cell is then used through the modifier only."""

    def __init__(self, base_cell) -> None:
        if base_cell._modified:
            raise RuntimeError(
                f"{type(self).__name__}: cell {base_cell.name!r} is already modified; one "
                "cell cannot be modified twice"
            )
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, batch_size=0, func=None, **kwargs):
        self._check_unmodified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(batch_size=batch_size, func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def _step(self, inputs, states):
        """One step of the base cell (which refuses direct calls while wrapped)."""
        self.base_cell._modified = False
        try:
            return self.base_cell(inputs, states)
        finally:
            self.base_cell._modified = True

    def _repr_body(self) -> str:
        return repr(self.base_cell)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_body()})"


class ZoneoutCell(ModifierCell):
    """Zoneout: in training each output and state unit keeps its previous value with
    probability `zoneout_outputs` / `zoneout_states`."""

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0) -> None:
        if isinstance(base_cell, BidirectionalCell):
            raise TypeError(
                "ZoneoutCell: a BidirectionalCell cannot be stepped, so it takes no zoneout; "
                "wrap the cells inside it instead"
            )
        super().__init__(base_cell)
        self.zoneout_outputs, self.zoneout_states = zoneout_outputs, zoneout_states
        self._prev_output = None

    @classmethod
    def _alias(cls) -> str:
        return "zoneout"

    def hybridize(self, active=True, **kwargs) -> None:
        """Hybridizes the base cell only: this cell carries its previous output from one
        step to the next in Python, which a replayed trace would not see change."""
        self.base_cell.hybridize(active, **kwargs)

    def reset(self) -> None:
        super().reset()
        self._prev_output = None

    def forward(self, inputs, states):
        tg = _tg()
        F = tg.nn.functional
        out, next_states = self._step(inputs, states)

        def zoneout(p, new, old):
            if p == 0.0:
                return new
            keep_new = F.dropout(tg.ones_like(new), p=p, training=is_training()) != 0
            return tg.where(keep_new, new, old)

        prev = self._prev_output if self._prev_output is not None else tg.zeros_like(out)
        out = zoneout(self.zoneout_outputs, out, prev)
        next_states = [
            zoneout(self.zoneout_states, new, old)
            for new, old in zip(next_states, states, strict=True)
        ]
        self._prev_output = out
        return out, next_states

    def _repr_body(self) -> str:
        return f"p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, {self.base_cell!r}"


class ResidualCell(ModifierCell):
    """The base cell's output plus its input (Wu et al., 2016)."""

    def forward(self, inputs, states):
        out, states = self._step(inputs, states)
        return out + inputs, states

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(
                length, inputs, begin_state, layout, merge_outputs, valid_length
            )
        finally:
            self.base_cell._modified = True
        merge = seq._is_array(outputs) if merge_outputs is None else merge_outputs
        inputs, axis, _ = seq.format_sequence(length, inputs, layout, merge)
        if valid_length is not None:  # the padded inputs add nothing
            inputs = seq.sequence_mask(seq.as_array(inputs, axis), valid_length, axis)
            if not merge:
                inputs = seq.as_steps(inputs, axis)
        if merge:
            return outputs + inputs, states
        return [o + x for o, x in zip(outputs, inputs, strict=True)], states


class BidirectionalCell(RecurrentCell):
    """`l_cell` over the sequence and `r_cell` over it reversed; their outputs are
    concatenated on the feature axis, their states listed l_cell's first. Only `unroll`:
    a step needs the whole sequence."""

    def __init__(self, l_cell, r_cell, output_prefix="bi_") -> None:
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("BidirectionalCell cannot be stepped; use unroll()")

    def state_info(self, batch_size=0):
        return [info for c in self._children.values() for info in c.state_info(batch_size)]

    def begin_state(self, batch_size=0, func=None, **kwargs):
        self._check_unmodified()
        return [
            s
            for c in self._children.values()
            for s in c.begin_state(batch_size=batch_size, func=func, **kwargs)
        ]

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        seq.check_layout(layout, "BidirectionalCell.unroll")
        tg = _tg()
        self.reset()
        steps, axis, batch_size = seq.format_sequence(length, inputs, layout, False)
        if valid_length is None:
            reversed_steps = steps[::-1]
        else:
            reversed_steps = seq.as_steps(
                seq.sequence_reverse(tg.stack(steps, dim=0), valid_length), 0
            )
        states = self._begin(begin_state, batch_size, steps)
        l_cell, r_cell = self._children["l_cell"], self._children["r_cell"]
        n_left = len(l_cell.state_info(batch_size))
        l_out, l_states = l_cell.unroll(
            length, steps, states[:n_left], layout, merge_outputs, valid_length
        )
        r_out, r_states = r_cell.unroll(
            length, reversed_steps, states[n_left:], layout, False, valid_length
        )
        if valid_length is None:
            r_out = r_out[::-1]
        else:
            r_out = seq.as_steps(seq.sequence_reverse(tg.stack(r_out, dim=0), valid_length), 0)
        merge = seq._is_array(l_out) if merge_outputs is None else merge_outputs
        if merge:
            outputs = tg.cat([seq.as_array(l_out, axis), tg.stack(r_out, dim=axis)], dim=2)
        else:
            outputs = [
                tg.cat([a, b], dim=1) for a, b in zip(seq.as_steps(l_out, axis), r_out, strict=True)
            ]
        if valid_length is not None:
            outputs = seq.sequence_mask(seq.as_array(outputs, axis), valid_length, axis)
            if not merge:
                outputs = seq.as_steps(outputs, axis)
        return outputs, l_states + r_states

    def __repr__(self) -> str:
        return (
            f"BidirectionalCell(forward={self._children['l_cell']!r}, "
            f"backward={self._children['r_cell']!r})"
        )
