"""Sequences for `mx.gluon.rnn`: splitting and stacking along time, and the masks of
variable-length batches (what MXNet's SequenceMask, SequenceLast and SequenceReverse do).

A sequence is either one array with a time axis (`layout` "NTC" or "TNC") or a list of
per-step arrays, each (N, ...). The masks take `valid_length` as an array of N lengths and
compute with array ops only (no value is read in Python), so they also run inside a
hybridized (compiled) forward.
"""

from __future__ import annotations

from typing import Any


def _tg():
    import tapegrad

    return tapegrad


def _is_array(x: Any) -> bool:
    from .....tensor import Tensor

    return isinstance(x, Tensor)


def check_layout(layout: str, where: str) -> None:
    if layout not in ("NTC", "TNC"):
        raise ValueError(f"{where}: layout must be 'NTC' or 'TNC', got {layout!r}")


def format_sequence(length, inputs, layout: str, merge, in_layout: str | None = None):
    """`(inputs, time_axis, batch_size)` with `inputs` as one array when `merge` is True,
    as a list of steps when False, and as it came when None (Gluon's rule: None keeps an
    array an array and a list a list)."""
    if inputs is None:
        raise ValueError("unroll: inputs is None; pass the input sequence (an array or a list)")
    from ...symbol import Symbol

    first = inputs[0] if isinstance(inputs, (list, tuple)) and inputs else inputs
    if isinstance(first, Symbol):
        raise TypeError(
            "unroll: the inputs are symbols; tapegrad builds no symbol graphs (it runs "
            "eagerly): unroll on arrays, and hybridize() and export() a block to save a graph"
        )
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if _is_array(inputs):
        batch_size = inputs.shape[layout.find("N")]
        if length is not None and inputs.shape[in_axis] != length:
            raise ValueError(
                f"unroll: length is {length} but the inputs have {inputs.shape[in_axis]} "
                f"steps on their time axis {in_axis} (layout {layout!r})"
            )
        if merge is False:
            return list(_tg().unbind(inputs, dim=in_axis)), axis, batch_size
        if axis != in_axis:
            inputs = _tg().swapaxes(inputs, axis, in_axis)
        return inputs, axis, batch_size
    inputs = list(inputs)
    if length is not None and len(inputs) != length:
        raise ValueError(f"unroll: length is {length} but {len(inputs)} input steps were given")
    batch_size = inputs[0].shape[0] if inputs else 0
    if merge is True:
        return _tg().stack(inputs, dim=axis), axis, batch_size
    return inputs, axis, batch_size


def as_steps(seq, axis: int) -> list:
    """The steps of a sequence (an array split along `axis`, or the list itself)."""
    return list(_tg().unbind(seq, dim=axis)) if _is_array(seq) else list(seq)


def as_array(seq, axis: int):
    """A sequence as one array, time on `axis`."""
    return seq if _is_array(seq) else _tg().stack(list(seq), dim=axis)


def _time_index(steps: int, valid_length, time_axis: int):
    """(t, lengths) broadcastable against a (.., T, .., N) pair of axes: t counts the steps
    along `time_axis`, lengths holds each batch element's valid length."""
    tg = _tg()
    lengths = tg.as_tensor(valid_length).to(tg.int64)
    t = tg.arange(steps)
    if time_axis == 0:  # (T, N)
        return tg.reshape(t, (steps, 1)), tg.reshape(lengths, (1, -1))
    return tg.reshape(t, (1, steps)), tg.reshape(lengths, (-1, 1))  # (N, T)


def _broadcast_to(mask, data):
    """A (T, N) / (N, T) mask with trailing axes for `data`'s features."""
    return _tg().reshape(mask, mask.shape + (1,) * (data.ndim - 2))


def sequence_mask(data, valid_length, time_axis: int):
    """`data` (time on `time_axis`, batch on the other of the first two axes) with every
    step at or past its sequence's valid length set to 0."""
    t, lengths = _time_index(data.shape[time_axis], valid_length, time_axis)
    keep = _broadcast_to(t < lengths, data)
    return _tg().where(keep, data, _tg().zeros_like(data))


def sequence_last(data, valid_length):
    """Each batch element's last valid step of `data` (T, N, ...): (N, ...)."""
    t, lengths = _time_index(data.shape[0], valid_length, 0)
    tg = _tg()
    pick = _broadcast_to(t == lengths - 1, data).to(data.dtype)
    return tg.sum(data * pick, dim=0)


def sequence_reverse(data, valid_length):
    """`data` (T, N, ...) with each batch element's first valid_length steps reversed and
    the padding after them left in place."""
    tg = _tg()
    steps = data.shape[0]
    t, lengths = _time_index(steps, valid_length, 0)
    index = tg.where(t < lengths, lengths - 1 - t, t + 0 * lengths)  # (T, N)
    index = tg.broadcast_to(_broadcast_to(index, data), data.shape)
    return tg.gather(data, 0, index)
