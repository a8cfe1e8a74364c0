"""Pickling and copy.deepcopy of tensors follow PyTorch: values, class, dtype and
requires_grad travel; the copy is a leaf with no gradient, hooks, graph or views."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tapegrad as tg

ROUND_TRIPS = {
    "pickle": lambda t: pickle.loads(pickle.dumps(t)),
    "deepcopy": copy.deepcopy,
}


@pytest.mark.parametrize("round_trip", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_a_leaf_that_requires_grad_round_trips_as_a_leaf(round_trip):
    # it raised "cannot pickle 'weakref.ReferenceType' object" (the leaf's accumulator link)
    x = tg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    (x * 2.0).sum().backward()
    y = round_trip(x)
    assert type(y) is tg.Tensor and y.requires_grad and y.is_leaf and y.grad is None
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    assert y.dtype == x.dtype
    (y * 3.0).sum().backward()  # the copy is its own leaf: x's gradient is untouched
    assert y.grad.tolist() == [[3.0] * 3] * 2 and x.grad.tolist() == [[2.0] * 3] * 2


@pytest.mark.parametrize("round_trip", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_a_view_of_a_non_leaf_becomes_a_leaf_with_its_own_storage(round_trip):
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    view = (x * 2.0)[1:]
    y = round_trip(view)
    assert y.grad_fn is None and y.requires_grad and y.tolist() == [4.0, 6.0]
    assert y._vc is not view._vc and not np.shares_memory(y.detach().numpy(), x.detach().numpy())


def test_an_untracked_tensor_keeps_dtype_and_values():
    t = tg.tensor(np.array([[1, 2], [3, 4]], dtype=np.int32))
    for round_trip in ROUND_TRIPS.values():
        u = round_trip(t)
        assert u.dtype == np.int32 and u.tolist() == [[1, 2], [3, 4]] and not u.requires_grad


def test_facade_arrays_keep_their_class_and_fields():
    from tapegrad.compat import megengine as mge
    from tapegrad.compat import mxnet as mx

    m = mge.tensor([1.0, 2.0])
    m.name = "weights"
    m2 = pickle.loads(pickle.dumps(m))
    assert type(m2) is type(m) and m2.name == "weights" and m2.numpy().tolist() == [1.0, 2.0]
    for a in (mx.nd.array([1.0, 2.0]), mx.np.array([1.0, 2.0])):
        b = copy.deepcopy(a)
        assert type(b) is type(a) and b.asnumpy().tolist() == [1.0, 2.0]
