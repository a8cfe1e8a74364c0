"""Assigning `.grad`: PyTorch's checks (a Tensor or None, the tensor's dtype and shape)."""

import pytest

import tapegrad as tg


def test_matching_gradient_is_kept_and_none_clears_it():
    x = tg.zeros(3, requires_grad=True)
    g = tg.ones(3)
    x.grad = g
    assert x.grad is g
    x.grad = None
    assert x.grad is None


def test_other_floating_dtype_raises_naming_both():
    x = tg.zeros(3, requires_grad=True)  # float32
    with pytest.raises(RuntimeError, match="dtype float64 to a tensor of dtype float32"):
        x.grad = tg.zeros(3, dtype=tg.float64)
    with pytest.raises(RuntimeError, match="dtype int64 to a tensor of dtype float32"):
        x.grad = tg.zeros(3, dtype=tg.int64)
    assert x.grad is None  # nothing was assigned


def test_other_shape_raises_naming_both_sizes():
    x = tg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"size \[4\] to a tensor of size \[3\]"):
        x.grad = tg.zeros(4)
    with pytest.raises(RuntimeError, match=r"size \[1, 3\] to a tensor of size \[3\]"):
        x.grad = tg.zeros(1, 3)


def test_not_a_tensor_raises_type_error():
    x = tg.zeros(3, requires_grad=True)
    with pytest.raises(TypeError, match="expected to be a Tensor or None"):
        x.grad = 3.0
