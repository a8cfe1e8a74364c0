"""tg.nn.utils.rnn: batches of sequences of different lengths, PyTorch's packed layout.

A `PackedSequence` holds the valid time steps of a batch only, time step by time step: the
rows of step t are the sequences still running at t, longest first (`batch_sizes[t]` of
them). The recurrent layers take one as input and skip each sequence's padding: a
sequence's last state (`h_n`) is the one after its own last step, and the reverse direction
of a bidirectional layer starts there.

Every function here is built from differentiable gathers, so gradients reach the padded
input (zero at the padding).

    >>> seqs = [tg.randn(5, 8), tg.randn(3, 8), tg.randn(2, 8)]
    >>> packed = tg.nn.utils.rnn.pack_sequence(seqs)
    >>> out, h = tg.nn.GRU(8, 16)(packed)
    >>> padded, lengths = tg.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    >>> padded.shape, lengths.tolist()
    ((3, 5, 16), [5, 3, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ... import creation
from ...ops import joins
from ...tensor import Tensor

__all__ = [
    "PackedSequence",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
    "invert_permutation",
]


class PackedSequence(NamedTuple):
    """The valid steps of a batch of sequences (module docstring). `data`: (sum of the
    lengths, *features); `batch_sizes`: int64 (max length,), how many sequences run at
    each step; `sorted_indices`: the batch order by decreasing length (None when the batch
    came sorted); `unsorted_indices`: its inverse. Make one with `pack_padded_sequence` or
    `pack_sequence`, not by hand."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """`data.to(...)`; the index tensors follow a device change (batch_sizes stays on
        the CPU, as in PyTorch)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device

        def move(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.to(device)

        return PackedSequence(
            data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices)
        )

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def double(self) -> PackedSequence:
        return self._replace(data=self.data.double())

    def float(self) -> PackedSequence:
        return self._replace(data=self.data.float())

    def half(self) -> PackedSequence:
        return self._replace(data=self.data.half())

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of range(n) (None stays None)."""
    if permutation is None:
        return None
    order = _ints(permutation, "invert_permutation", "permutation")
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    return creation.tensor(inverse, device=permutation.device)


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | Sequence[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with `batch_first`) whose sequence b is
    `lengths[b]` steps long. `enforce_sorted`: the lengths must be decreasing (else the
    batch is sorted here and `sorted_indices` records how)."""
    fn = "pack_padded_sequence"
    _check_tensor(input, fn, "input", 2)
    lens = _ints(lengths, fn, "lengths")
    batch = input.shape[0 if batch_first else 1]
    if lens.shape != (batch,):
        raise ValueError(
            f"{fn}: expected one length per sequence ({batch}), got {lens.size} lengths"
        )
    if lens.size and lens.min() <= 0:
        raise RuntimeError(
            f"{fn}: every length must be greater than 0, got {int(lens.min())} (an empty "
            "sequence has no step to pack; leave it out of the batch)"
        )
    steps = input.shape[1 if batch_first else 0]
    if lens.size and lens.max() > steps:
        raise RuntimeError(
            f"{fn}: a length of {int(lens.max())} is longer than the input's {steps} steps"
        )
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError(
                f"{fn}: `lengths` must be sorted in decreasing order when enforce_sorted is "
                "True; pass enforce_sorted=False to sort the batch here"
            )
        order = None
    else:
        order = np.argsort(-lens, kind="stable")  # ties keep their order, as PyTorch's sort
        lens = lens[order]
    time_major = input.swapaxes(0, 1) if batch_first else input
    steps_of, rows_of = _packed_positions(lens)
    if order is not None:
        rows_of = order[rows_of]  # take from the unsorted input directly: one gather
    data = time_major[steps_of, rows_of]
    batch_sizes = (lens[None, :] > np.arange(int(lens.max()) if lens.size else 0)[:, None]).sum(1)
    sorted_indices = None if order is None else creation.tensor(order, device=input.device)
    return PackedSequence(
        data,
        creation.tensor(batch_sizes.astype(np.int64)),
        sorted_indices,
        invert_permutation(sorted_indices),
    )


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Undo `pack_padded_sequence`: (padded (T, B, *) or (B, T, *), lengths int64 (B,)),
    in the batch's original order. `total_length` pads to that many steps (at least the
    longest length: a DataParallel-style fixed size)."""
    fn = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{fn}: expected a PackedSequence, got {type(sequence).__name__}")
    lens = _lengths_of(sequence.batch_sizes)
    steps = lens.max() if lens.size else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                f"{fn}: total_length must be at least the longest sequence's {steps} steps, "
                f"got {total_length}"
            )
        steps = total_length
    padded = _padded_sorted(sequence.data, lens, int(steps), padding_value)
    if sequence.unsorted_indices is not None:
        back = _ints(sequence.unsorted_indices, fn, "unsorted_indices")
        padded = padded[:, back]
        lens = lens[back]
    if batch_first:
        padded = padded.swapaxes(0, 1)
    return padded, creation.tensor(lens.astype(np.int64))


def pad_sequence(
    sequences: Sequence[Tensor] | Tensor,
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences (L_i, *) of different lengths into (T, B, *) (or (B, T, *)),
    padded with `padding_value` after each one (`padding_side="left"`: before)."""
    fn = "pad_sequence"
    if padding_side not in ("right", "left"):
        raise ValueError(f"{fn}: padding_side must be 'right' or 'left', got {padding_side!r}")
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise ValueError(f"{fn}: expected at least one sequence, got an empty list")
    for i, s in enumerate(sequences):
        _check_tensor(s, fn, f"sequence {i}", 1)
        if s.shape[1:] != sequences[0].shape[1:]:
            raise ValueError(
                f"{fn}: every sequence must have the same trailing shape; sequence {i} has "
                f"{tuple(s.shape[1:])}, sequence 0 {tuple(sequences[0].shape[1:])}"
            )
    steps = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        missing = steps - s.shape[0]
        if missing:
            pad = creation.full(
                (missing, *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device
            )
            s = joins.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        rows.append(s)
    return joins.stack(rows, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False
) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length (a list of (L_i, *))."""
    fn = "unpad_sequence"
    _check_tensor(padded_sequences, fn, "padded_sequences", 2)
    lens = _ints(lengths, fn, "lengths")
    batch_major = padded_sequences if batch_first else padded_sequences.swapaxes(0, 1)
    if lens.shape != (batch_major.shape[0],):
        raise ValueError(
            f"{fn}: expected one length per sequence ({batch_major.shape[0]}), got {lens.size}"
        )
    return [batch_major[b, : int(n)] for b, n in enumerate(lens)]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """`pack_padded_sequence(pad_sequence(sequences), lengths)` for a list of (L_i, *)."""
    lengths = [s.shape[0] if isinstance(s, Tensor) else 0 for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds (the inverse of `pack_sequence`)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


# ---------------------------------------------------------------- helpers (and for nn.rnn)
def sorted_lengths(packed: PackedSequence) -> np.ndarray:
    """The lengths of a PackedSequence's sequences in its sorted (packed) order."""
    return _lengths_of(packed.batch_sizes)


def padded_sorted(packed: PackedSequence) -> Tensor:
    """The packed data as a zero-padded (T, B, *) batch in the packed (sorted) order."""
    lens = _lengths_of(packed.batch_sizes)
    return _padded_sorted(packed.data, lens, int(lens.max()) if lens.size else 0, 0.0)


def packed_data(time_major: Tensor, packed: PackedSequence) -> Tensor:
    """The valid steps of a (T, B, *) batch in the sorted order, laid out as `packed`."""
    steps_of, rows_of = _packed_positions(_lengths_of(packed.batch_sizes))
    return time_major[steps_of, rows_of]


def _packed_positions(sorted_lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(step, row) of each packed row: step by step, the rows still running."""
    steps = int(sorted_lens.max()) if sorted_lens.size else 0
    running = sorted_lens[None, :] > np.arange(steps)[:, None]  # (T, B), step-major
    steps_of, rows_of = np.nonzero(running)
    return steps_of, rows_of


def _padded_sorted(data: Tensor, lens: np.ndarray, steps: int, padding_value: float) -> Tensor:
    """(steps, B, *) from packed rows: one gather from the data plus a padding row."""
    batch = lens.size
    running = lens[None, :] > np.arange(steps)[:, None]
    source = np.full((steps, batch), data.shape[0], dtype=np.int64)  # the padding row
    source[running] = np.arange(data.shape[0])  # nonzero's order is the packed order
    pad = creation.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    return joins.cat([data, pad], 0)[source]


def _lengths_of(batch_sizes: Tensor) -> np.ndarray:
    sizes = _ints(batch_sizes, "PackedSequence", "batch_sizes")
    if sizes.size == 0:
        return np.zeros(0, dtype=np.int64)
    return (sizes[None, :] > np.arange(int(sizes[0]))[:, None]).sum(1)


def _ints(value: Any, fn: str, name: str) -> np.ndarray:
    arr = value.detach().numpy() if isinstance(value, Tensor) else np.asarray(value)
    if arr.dtype.kind not in "iu" and arr.size:
        raise TypeError(f"{fn}: {name} must hold integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{fn}: {name} must be 1-D, got shape {arr.shape}")
    return arr.astype(np.int64)


def _check_tensor(t: Any, fn: str, name: str, min_ndim: int) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    if t.ndim < min_ndim:
        raise ValueError(
            f"{fn}: {name} must have at least {min_ndim} dimensions, got shape {tuple(t.shape)}"
        )
