"""`mx.gluon.contrib.rnn`: the projected LSTM cell, variational dropout and
`dynamic_unroll` (MXNet 1.9.1).

- `LSTMPCell(hidden_size, projection_size)`: an LSTM cell whose output and recurrent
  state is r = W_hr h (Sak et al., 2014); states [r (N, projection), c (N, hidden)]. The
  fused `rnn.LSTM(..., projection_size=P)` is a stack of these.
- `VariationalDropoutCell(base_cell, drop_inputs, drop_states, drop_outputs)`: dropout with
  one mask per sequence (the same at every step) on the inputs, the first state (h) and
  the outputs (Gal and Ghahramani, 2016). The masks are drawn at the first step and kept
  until `reset()` (which `unroll` calls).

    >>> cell = mx.gluon.contrib.rnn.LSTMPCell(8, 3)
    >>> cell.initialize()
    >>> out, (r, c) = cell.unroll(4, mx.nd.ones((2, 4, 5)), merge_outputs=True)
    >>> out.shape, r.shape, c.shape
    ((2, 4, 3), (2, 3), (2, 8))
"""

from __future__ import annotations

from ...rnn import _sequence as seq
from ...rnn.rnn_cell import BidirectionalCell, ModifierCell, _GatedCell, dropout, lstm_step

__all__ = ["LSTMPCell", "VariationalDropoutCell", "dynamic_unroll"]


def _tg():
    import tapegrad

    return tapegrad


class LSTMPCell(_GatedCell):
    """LSTM cell with a projection: gates from x and the projected r, c' = f c + i g,
    h = o tanh(c'), r' = h @ h2r_weight.T (no bias); returns r', [r', c']."""

    _gates = 4
    _states = 2

    def __init__(
        self,
        hidden_size,
        projection_size,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        h2r_weight_initializer=None,
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
            recurrent_size=projection_size,
        )
        self._projection_size = projection_size
        self.h2r_weight = self.params.get(
            "h2r_weight",
            shape=(projection_size, hidden_size),
            init=h2r_weight_initializer,
            allow_deferred_init=True,
        )

    @classmethod
    def _alias(cls) -> str:
        return "lstmp"

    def state_info(self, batch_size=0):
        return [
            {"shape": (batch_size, self._projection_size), "__layout__": "NC"},
            {"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
        ]

    def forward(self, inputs, states):
        i2h, h2r = self._projections(inputs, states[0])  # h2h acts on the projection r
        h, c = lstm_step(i2h + h2r, states[1])
        self.h2r_weight._finish_deferred_init()
        r = _tg().matmul(h, self.h2r_weight.data().T)
        return r, [r, c]

    def _repr_body(self) -> str:
        return f"{super()._repr_body()} -> {self._projection_size}"


class VariationalDropoutCell(ModifierCell):
    """Dropout with one mask per sequence on the inputs, the first state and the outputs
    of `base_cell` (rates 0: no dropout there)."""

    def __init__(self, base_cell, drop_inputs=0.0, drop_states=0.0, drop_outputs=0.0) -> None:
        if drop_states and isinstance(base_cell, BidirectionalCell):
            raise TypeError(
                "VariationalDropoutCell: a BidirectionalCell takes no state dropout; wrap the "
                "cells inside it instead"
            )
        super().__init__(base_cell)
        self.drop_inputs, self.drop_states, self.drop_outputs = (
            drop_inputs,
            drop_states,
            drop_outputs,
        )
        self._masks: dict[str, object] = {}

    @classmethod
    def _alias(cls) -> str:
        return "vardrop"

    def hybridize(self, active=True, **kwargs) -> None:
        """Hybridizes the base cell only: the masks live in Python from step to step."""
        self.base_cell.hybridize(active, **kwargs)

    def reset(self) -> None:
        super().reset()
        self._masks = {}

    def _mask(self, kind: str, rate: float, like):
        """The sequence's mask for `kind`, drawn at its first step (ones outside training)."""
        mask = self._masks.get(kind)
        if mask is None:
            mask = self._masks[kind] = dropout(_tg().ones_like(like), rate)
        return mask

    def forward(self, inputs, states):
        states = list(states)
        if self.drop_states:  # h only: the first state
            states[0] = states[0] * self._mask("states", self.drop_states, states[0])
        if self.drop_inputs:
            inputs = inputs * self._mask("inputs", self.drop_inputs, inputs)
        out, next_states = self._step(inputs, states)
        if self.drop_outputs:
            out = out * self._mask("outputs", self.drop_outputs, out)
        return out, next_states

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        if self.drop_states:  # step by step: the state mask applies inside the recurrence
            return super().unroll(length, inputs, begin_state, layout, merge_outputs, valid_length)
        # without state dropout, the input and output masks apply to whole sequences
        seq.check_layout(layout, "VariationalDropoutCell.unroll")
        self.reset()
        inputs, axis, _ = seq.format_sequence(length, inputs, layout, True)
        inputs = dropout(inputs, self.drop_inputs, (axis,))
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(
                length, inputs, begin_state, layout, True, valid_length
            )
        finally:
            self.base_cell._modified = True
        outputs = dropout(outputs, self.drop_outputs, (axis,))
        if valid_length is not None:
            outputs = seq.sequence_mask(outputs, valid_length, axis)
        if merge_outputs is False:
            outputs = seq.as_steps(outputs, axis)
        return outputs, states

    def _repr_body(self) -> str:
        return f"p_out = {self.drop_outputs}, p_state = {self.drop_states}"


def dynamic_unroll(
    cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC", valid_length=None
):
    """MXNet's `contrib.rnn.rnn_cell.dynamic_unroll`: run `cell` over every step of the
    array `inputs` from `begin_state` and return `(outputs, states)`, the outputs merged;
    with `valid_length`, padded steps are zero and each sequence's states stop at its last
    step. `drop_inputs` / `drop_outputs`: dropout on the whole input / output sequence (in
    training). tapegrad runs it eagerly (a hybridized caller replays it), so it is
    `cell.unroll(..., merge_outputs=True)` with those dropouts around it."""
    seq.check_layout(layout, "dynamic_unroll")
    if not seq._is_array(inputs):
        raise TypeError(
            f"dynamic_unroll: inputs must be one array (layout {layout!r}), got "
            f"{type(inputs).__name__}"
        )
    length = inputs.shape[layout.find("T")]
    inputs = dropout(inputs, drop_inputs)
    outputs, states = cell.unroll(
        length, inputs, begin_state, layout, merge_outputs=True, valid_length=valid_length
    )
    return dropout(outputs, drop_outputs), states
