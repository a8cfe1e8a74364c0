"""F.dropout1d / dropout2d / dropout3d on every input rank, as PyTorch 2.13: which ranks
are errors, which warn, and over which dimensions one draw is shared."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _varying_dims(y: np.ndarray) -> list[int]:
    """The dimensions along which the output of dropout on ones is not constant."""
    return [
        d
        for d in range(y.ndim)
        if not np.array_equal(y, np.take(y, [0], axis=d).repeat(y.shape[d], axis=d))
    ]


def _run(fn, x):
    """(output as NumPy or None, the error's type or None, the warning messages)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            y = fn(x, 0.5)
        except RuntimeError:
            return None, RuntimeError, [str(w.message) for w in caught]
    y = y.detach().numpy()
    return y, None, [str(w.message) for w in caught]


CASES = [
    ("dropout1d", (12,)),
    ("dropout1d", (12, 12)),
    ("dropout1d", (12, 12, 3)),
    ("dropout1d", (6, 6, 6, 6)),
    ("dropout2d", (12,)),
    ("dropout2d", (12, 12)),
    ("dropout2d", (12, 12, 3)),
    ("dropout2d", (12, 12, 3, 3)),
    ("dropout2d", (6, 6, 3, 3, 3)),
    ("dropout3d", (12,)),
    ("dropout3d", (12, 12)),
    ("dropout3d", (12, 12, 3)),
    ("dropout3d", (12, 3, 3, 3)),
    ("dropout3d", (6, 6, 3, 3, 3)),
    ("dropout3d", (6, 3, 3, 3, 3, 3)),
]


@pytest.mark.parametrize("name,shape", CASES)
def test_channel_dropout_ranks_as_torch(torch, name, shape):
    tg.manual_seed(0)
    torch.manual_seed(0)
    ours = _run(getattr(F, name), tg.ones(shape))
    theirs = _run(getattr(torch.nn.functional, name), torch.ones(shape))
    assert ours[1] is theirs[1]  # both raise, or neither
    assert len(ours[2]) == len(theirs[2])  # warned the same number of times
    for a, b in zip(ours[2], theirs[2]):  # and about the same thing
        assert ("(N, C, L)" in a) == ("(N, C, L)" in b)
        assert ("deprecated" in a) == ("deprecated" in b)
    if ours[0] is not None:
        assert _varying_dims(ours[0]) == _varying_dims(theirs[0])
        assert set(np.unique(ours[0])) <= {0.0, 2.0}


def test_the_warning_points_at_the_caller():
    with pytest.warns(UserWarning, match=r"dropout2d: received a 3-D input.*\(N, C, L\)") as rec:
        F.dropout2d(tg.ones(4, 4, 4))
    assert rec[0].filename == __file__
    with pytest.warns(
        UserWarning, match=r"dropout3d: received a 3-D input, which is deprecated"
    ) as rec:
        F.dropout3d(tg.ones(4, 4, 4))
    assert rec[0].filename == __file__


def test_not_training_still_checks_dropout1d_ranks_and_warns(torch):
    x = tg.ones(3)
    with pytest.raises(RuntimeError, match="dropout1d: expected a 2-D"):
        F.dropout1d(x, 0.5, training=False)
    with pytest.warns(UserWarning, match="deprecated"):
        assert F.dropout2d(x, 0.5, training=False) is x  # PyTorch: the input back, warned
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout2d(tg.ones(2, 2, 2, 2), 1.5)
