"""tg.multinomial: PyTorch's semantics and argument checks, seeded by tg.manual_seed."""

import numpy as np
import pytest

import tapegrad as tg


def test_with_replacement_follows_the_weights():
    tg.manual_seed(0)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    draws = tg.multinomial(tg.tensor(w), 40000, replacement=True)
    assert draws.dtype == np.int64 and draws.shape == (40000,)
    freq = np.bincount(draws.numpy(), minlength=4) / 40000
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.01)


def test_without_replacement_follows_the_weights_and_never_repeats():
    tg.manual_seed(1)
    w = tg.tensor([[1.0, 2.0, 3.0, 4.0]] * 20000)
    draws = tg.multinomial(w, 2).numpy()
    assert draws.shape == (20000, 2) and (draws[:, 0] != draws[:, 1]).all()
    first = np.bincount(draws[:, 0], minlength=4) / 20000
    np.testing.assert_allclose(first, [0.1, 0.2, 0.3, 0.4], atol=0.015)
    # P(second = j) = sum_i p_i p_j / (1 - p_i) for i != j
    p = np.array([0.1, 0.2, 0.3, 0.4])
    second = [sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j) for j in range(4)]
    np.testing.assert_allclose(np.bincount(draws[:, 1], minlength=4) / 20000, second, atol=0.015)
    perm = tg.multinomial(tg.ones(6), 6).tolist()
    assert sorted(perm) == list(range(6))


def test_zero_weights_are_never_drawn_and_rows_are_independent():
    w = tg.tensor([[0.0, 5.0, 0.0], [1.0, 0.0, 0.0]])
    assert tg.multinomial(w, 3, replacement=True).tolist() == [[1, 1, 1], [0, 0, 0]]
    assert tg.multinomial(w, 1).tolist() == [[1], [0]]
    assert w.multinomial(1).tolist() == [[1], [0]]  # the method


def test_without_replacement_zero_weights_come_last_in_index_order():
    w = [[1.0, 0.0, 0.0], [0.0, 0.0, 3.0]]
    assert tg.multinomial(tg.tensor(w), 3).tolist() == [[0, 1, 2], [2, 0, 1]]
    torch = pytest.importorskip("torch")
    assert torch.multinomial(torch.tensor(w), 3).tolist() == [[0, 1, 2], [2, 0, 1]]


def test_seeded_draws_repeat():
    w = tg.tensor([0.2, 0.5, 0.3])
    tg.manual_seed(7)
    a = tg.multinomial(w, 10, replacement=True).tolist()
    tg.manual_seed(7)
    assert tg.multinomial(w, 10, replacement=True).tolist() == a


CHECKS = [
    (lambda lib: lib.ones(2, 2, 2), 1, False, "1 or 2 dim"),
    (lambda lib: lib.ones(3), 4, False, "without replacement"),
    (lambda lib: lib.tensor([1.0, -1.0]), 1, True, "element < 0"),
    (lambda lib: lib.tensor([1.0, float("nan")]), 1, True, "inf"),
    (lambda lib: lib.zeros(3), 1, True, "sum of probabilities"),
    (lambda lib: lib.ones(3), 0, True, "n_sample <= 0"),
    (lambda lib: lib.tensor([1, 2]), 1, True, "floating"),
]


@pytest.mark.parametrize(("make", "n", "replacement", "match"), CHECKS)
def test_arguments_are_checked_as_pytorch_does(make, n, replacement, match):
    with pytest.raises(RuntimeError, match=match):
        tg.multinomial(make(tg), n, replacement=replacement)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        torch.multinomial(make(torch), n, replacement=replacement)


def test_a_generator_object_draws_its_own_stream():
    w = tg.tensor([1.0, 2.0, 3.0, 4.0])
    a = tg.multinomial(w, 3, generator=tg.Generator().manual_seed(5))
    b = tg.multinomial(w, 3, generator=tg.Generator().manual_seed(5))
    assert a.tolist() == b.tolist()
    with pytest.raises(TypeError, match="multinomial: generator must be a tg.Generator"):
        tg.multinomial(tg.ones(2), 1, generator=object())
