"""RNN, LSTM and GRU layers written as ONNX's own `RNN`, `LSTM` and `GRU` operators.

One node per layer (both directions in it), rather than the layer's time loop unrolled:
the sequence length and the batch stay free, and the default zero initial state is ONNX's
default (an absent `initial_h`), so a dynamic batch needs no state input.

The weights are converted when exporting: ONNX stacks the directions (`W` is
[num_directions, gates * hidden, input]), concatenates the two biases (`B` is
[num_directions, 2 * gates * hidden]) and orders the gates differently: LSTM i, o, f, c
where tapegrad (as PyTorch) has i, f, g, o; GRU z, r, h where tapegrad has r, z, n. A GRU
applies the reset gate after the hidden projection (`linear_before_reset=1`), as PyTorch.
Layers stack by feeding each node's `Y` ([seq, directions, batch, hidden]) to the next as
[seq, batch, directions * hidden].
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..compile import hook
from ..tensor import Tensor
from ._symbolic import SymbolicContext, Value

if TYPE_CHECKING:
    from ..nn.rnn import RNNBase
    from ._trace import _OwnedTrace

_OPERATOR = {"RNN_TANH": "RNN", "RNN_RELU": "RNN", "LSTM": "LSTM", "GRU": "GRU"}
_ACTIVATION = {"RNN_TANH": "Tanh", "RNN_RELU": "Relu"}
# tapegrad's gate blocks in ONNX's order: LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h
_GATE_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2]}


def is_recurrent(module: object) -> bool:
    """An RNN, LSTM or GRU whose forward is tapegrad's own (a subclass with a forward of its
    own, or a `forward` set on the instance, is traced: its code may do anything around the
    layer; and the export would replace, then remove, an instance's own)."""
    from ..nn.rnn import RNNBase

    return (
        isinstance(module, RNNBase)
        and type(module).forward is RNNBase.forward
        and "forward" not in vars(module)
    )


def _exported_whole(module: RNNBase, input: object) -> bool:
    """Whether this call is written as an ONNX operator per layer; otherwise its ops are
    traced one by one (the time loop unrolled). A dropout between layers in training is
    left to the traced ops, which refuse it naming the layer; so are the dtypes onnxruntime
    has no kernel for (its `RNN`, `LSTM` and `GRU` run float32 only)."""
    if not isinstance(input, Tensor) or (
        module.training and module.dropout and module.num_layers > 1
    ):
        return False
    return bool(input._data.dtype == np.float32)


def traced_forward(trace: _OwnedTrace, module: RNNBase, path: str) -> Callable[..., Any]:
    """The layer's forward while exporting: one call of the trace, for `symbolic`."""
    original: Callable[[Any, Any], Any] = module.forward  # typed at the boundary (nn isn't)

    def forward(input: Any, hx: Any = None) -> Any:
        if hook.local.trace is not trace or not _exported_whole(module, input):
            return original(input, hx)  # inside an untraced call, or left to the ops
        states = [] if hx is None else list(hx) if isinstance(hx, (tuple, list)) else [hx]
        return trace.symbolic_call(
            type(module).__name__,
            partial(symbolic, module, path),
            [input, *states],
            {},
            lambda: original(input, hx),
        )

    return forward


def _gates(array: np.ndarray[Any, Any], mode: str) -> np.ndarray[Any, Any]:
    order = _GATE_ORDER.get(mode)
    if order is None:
        return array
    blocks = array.reshape(len(order), -1, *array.shape[1:])
    reordered: np.ndarray[Any, Any] = blocks[order].reshape(array.shape)
    return reordered


def _weights(
    g: SymbolicContext, module: RNNBase, layer: int, prefix: str
) -> tuple[Value, Value, Value | None]:
    """W, R, B of one layer (its directions stacked), in ONNX's layout and gate order."""
    dirs = 2 if module.bidirectional else 1
    w, r, b = [], [], []
    for d in range(dirs):
        w_ih, b_ih, w_hh, b_hh = _layer_params(module, layer, d)
        w.append(_gates(w_ih._data, module.mode))
        r.append(_gates(w_hh._data, module.mode))
        if b_ih is not None and b_hh is not None:
            b.append(np.concatenate([_gates(v._data, module.mode) for v in (b_ih, b_hh)]))
    name = f"{prefix}{{}}_l{layer}"
    return (
        g.constant(np.stack(w), name=name.format("W")),
        g.constant(np.stack(r), name=name.format("R")),
        g.constant(np.stack(b), name=name.format("B")) if b else None,
    )


def _layer_params(
    module: RNNBase, layer: int, d: int
) -> tuple[Tensor, Tensor | None, Tensor, Tensor | None]:
    """(weight_ih, bias_ih, weight_hh, bias_hh) of a layer and direction (biases None
    without bias)."""
    params: Callable[[int, int], tuple[Tensor, Tensor | None, Tensor, Tensor | None]] = (
        module._layer_params  # typed at the boundary
    )
    return params(layer, d)


def _axes(g: SymbolicContext, *axes: int) -> Value:
    return g.constant(np.asarray(axes, dtype=np.int64))


def _layer_state(g: SymbolicContext, state: Value | None, layer: int, dirs: int) -> Value | None:
    """Rows [layer * dirs, (layer + 1) * dirs) of an initial state (num_layers * dirs, N, H)."""
    if state is None:
        return None
    first = layer * dirs
    out = g.op("Slice", state, _axes(g, first), _axes(g, first + dirs), _axes(g, 0))
    assert isinstance(out, Value)
    return out


def _one(v: Value | tuple[Value, ...]) -> Value:
    assert isinstance(v, Value)
    return v


def symbolic(
    module: RNNBase,
    path: str,
    g: SymbolicContext,
    x: Value,
    h0: Value | None = None,
    c0: Value | None = None,
) -> tuple[Value, ...]:
    """The layer on input `x` (and initial states): (output, h_n) or (output, h_n, c_n)."""
    mode, hidden = module.mode, module.hidden_size
    dirs = 2 if module.bidirectional else 1
    is_lstm = mode == "LSTM"
    unbatched = x.ndim == 2
    if unbatched:  # (L, H_in) and states (D * layers, H): a batch of one
        seq = _one(g.op("Unsqueeze", x, _axes(g, 1)))
        h0 = None if h0 is None else _one(g.op("Unsqueeze", h0, _axes(g, 1)))
        c0 = None if c0 is None else _one(g.op("Unsqueeze", c0, _axes(g, 1)))
    elif module.batch_first:  # the states are (D * layers, N, H) either way
        seq = _one(g.op("Transpose", x, perm_i=[1, 0, 2]))
    else:
        seq = x
    attrs: dict[str, Any] = {
        "hidden_size_i": hidden,
        "direction_s": "bidirectional" if dirs == 2 else "forward",
    }
    if mode in _ACTIVATION:
        attrs["activations_s"] = [_ACTIVATION[mode]] * dirs
    if mode == "GRU":
        attrs["linear_before_reset_i"] = 1
    prefix = f"{path}." if path else ""
    h_n, c_n = [], []
    for layer in range(module.num_layers):
        w, r, b = _weights(g, module, layer, prefix)
        inputs: list[Value | None] = [seq, w, r, b, None, _layer_state(g, h0, layer, dirs)]
        if is_lstm:
            inputs.append(_layer_state(g, c0, layer, dirs))
        while inputs[-1] is None:  # trailing optional inputs are left out
            inputs.pop()
        outs = g.op(_OPERATOR[mode], *inputs, outputs=3 if is_lstm else 2, **attrs)
        assert isinstance(outs, tuple)
        y = outs[0]  # (L, D, N, H) -> (L, N, D * H)
        if dirs == 1:
            seq = _one(g.op("Squeeze", y, _axes(g, 1)))
        else:
            moved = g.op("Transpose", y, perm_i=[0, 2, 1, 3])
            seq = _one(g.op("Reshape", moved, _axes(g, 0, 0, -1)))
        h_n.append(outs[1])
        if is_lstm:
            c_n.append(outs[2])
    results = [seq, *(_concat(g, s) for s in ([h_n, c_n] if is_lstm else [h_n]))]
    if unbatched:
        return tuple(_one(g.op("Squeeze", v, _axes(g, 1))) for v in results)
    if module.batch_first:
        results[0] = _one(g.op("Transpose", results[0], perm_i=[1, 0, 2]))
    return tuple(results)


def _concat(g: SymbolicContext, parts: list[Value]) -> Value:
    return parts[0] if len(parts) == 1 else _one(g.op("Concat", *parts, axis_i=0))
