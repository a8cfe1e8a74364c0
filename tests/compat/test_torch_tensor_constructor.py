"""`torch.Tensor(...)` under the facade is PyTorch's legacy constructor: data becomes the
default dtype, ints are sizes, a tensor comes back as itself; the class is still the type of
every tensor."""

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.torch as torch


def test_data_becomes_the_default_dtype_whatever_its_own():
    assert torch.Tensor([0]).dtype == np.float32  # a list of ints: float32, not int64
    assert torch.Tensor(np.array([1, 2], dtype=np.int64)).dtype == np.float32
    t = torch.Tensor([[1, 2], [3, 4]])
    assert t.shape == (2, 2) and t.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_default_dtype_is_followed():
    before = tg.get_default_dtype()
    try:
        tg.set_default_dtype("float64")
        assert torch.Tensor([1, 2]).dtype == np.float64
        assert torch.Tensor(3).dtype == np.float64
    finally:
        tg.set_default_dtype(before)


def test_ints_and_sizes_are_shapes():
    assert torch.Tensor(2, 3).shape == (2, 3)
    assert torch.Tensor(2, 3).dtype == np.float32
    assert torch.Tensor().shape == (0,)
    # `fill_` on the result, as the BiLSTM-CRF tutorial style does
    assert torch.Tensor(1, 3).fill_(-5.0).tolist() == [[-5.0, -5.0, -5.0]]


def test_a_tensor_gives_an_alias_of_itself():
    x = tg.tensor([1, 2])
    y = torch.Tensor(x)
    assert y.dtype == np.int64  # not converted to the default dtype
    y[0] = 5
    assert x.tolist() == [5, 2]  # same storage
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    (torch.Tensor(w) * 3).sum().backward()  # still on w's graph
    assert w.grad.tolist() == [3.0, 3.0]


def test_it_is_still_the_type_of_every_tensor():
    assert isinstance(tg.ones(2), torch.Tensor)
    assert isinstance(torch.nn.Parameter(tg.ones(2)), torch.Tensor)
    assert issubclass(tg.Tensor, torch.Tensor)
    assert not isinstance(np.ones(2), torch.Tensor)
    assert torch.Tensor.add is tg.Tensor.add

    class Tagged(torch.Tensor):
        pass

    t = Tagged([1.0, 2.0])  # a subclass is a real core tensor with the core constructor
    assert isinstance(t, tg.Tensor) and isinstance(t, Tagged) and t.tolist() == [1.0, 2.0]
    assert not isinstance(tg.ones(1), Tagged)


def test_misuse_says_what_to_do():
    with pytest.raises(TypeError, match=r"torch\.Tensor\(\).*torch\.tensor"):
        torch.Tensor([1.0], dtype="float64")
    with pytest.raises(TypeError, match=r"torch\.Tensor\(\).*single number"):
        torch.Tensor(2.5)
    with pytest.raises(TypeError, match=r"torch\.Tensor\(\).*sequence of data"):
        torch.Tensor([1.0], [2.0])


def test_matches_pytorch():
    real = pytest.importorskip("torch")
    for args in [([0],), ([[1, 2], [3, 4]],), (2, 3), ()]:
        ours, theirs = torch.Tensor(*args), real.Tensor(*args)
        assert ours.shape == tuple(theirs.shape)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    x = real.tensor([1, 2])
    y = real.Tensor(x)  # the behaviour test_a_tensor_gives_an_alias_of_itself follows
    assert y.dtype == real.int64 and y.data_ptr() == x.data_ptr()
