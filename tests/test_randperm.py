"""randperm: a seeded permutation of 0 .. n-1."""

import numpy as np
import pytest

import tapegrad as tg


def test_randperm_is_a_seeded_permutation():
    tg.manual_seed(3)
    p = tg.randperm(6)
    tg.manual_seed(3)
    assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(6))
    assert tg.randperm(6).tolist() == p.tolist()
    assert tg.randperm(3, dtype=tg.float32).dtype == np.float32
    with pytest.raises(ValueError, match="randperm: n must be non-negative, got -1"):
        tg.randperm(-1)
