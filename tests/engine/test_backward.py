"""Ambient (PyTorch) autograd semantics: accumulation, retain_graph, higher order, inputs=,
grad(), version counters, .data vs detach(), deep graphs."""

import gc

import numpy as np
import pytest

import tapegrad as tg


def test_requires_grad_propagates_and_leaves():
    x = tg.ones(3, requires_grad=True)
    c = tg.ones(3)
    y = x * c
    z = c * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward"
    assert not z.requires_grad and z.grad_fn is None
    assert x.is_leaf and x.grad_fn is None
    # next_functions lead to the leaf's accumulator, a constant gives (None, 0)
    (acc, _), (const, _) = y.grad_fn.next_functions
    assert acc.name() == "AccumulateGrad" and const is None


class _Halves(tg.autograd.Function):
    """Two outputs: the first and the second half of x."""

    @staticmethod
    def forward(ctx, x):
        n = x.shape[0] // 2
        return x[:n].clone(), x[n:].clone()

    @staticmethod
    def backward(ctx, ga, gb):
        return tg.cat([ga, gb])


def test_edges_to_other_outputs_of_a_node_keep_their_output_index():
    # Node.next holds the input nodes; the output indices are kept only when one is not 0
    x = tg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = _Halves.apply(x)
    assert a.grad_fn is b.grad_fn
    y = b * 3.0 + a  # b is output 1 of the Function's node, a output 0
    (mul, nr_mul), (halves, nr_a) = y.grad_fn.next_functions
    assert mul.name() == "MulBackward" and nr_mul == 0
    assert halves is a.grad_fn and nr_a == 0
    (halves_b, nr_b), const = mul.next_functions
    assert halves_b is halves and nr_b == 1 and const == (None, 0)
    y.backward(tg.tensor([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 10.0, 3.0, 30.0])


def test_leaf_gradients_accumulate_across_backward_calls():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    for k in range(1, 4):
        y = x * x
        y.backward(tg.ones(2))
        np.testing.assert_allclose(x.grad.numpy(), k * np.array([2.0, 4.0]))


def test_non_leaf_grad_stays_none_unless_retained():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h2 = x * 4
    h2.retain_grad()
    (h * h2).backward(tg.ones(2))
    with pytest.warns(UserWarning, match="not a leaf"):  # as PyTorch warns
        assert h.grad is None
    np.testing.assert_allclose(h2.grad.numpy(), 3 * np.array([1.0, 2.0]))
    assert h2.retains_grad and not h.retains_grad


def test_second_backward_without_retain_graph_raises():
    x = tg.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    with pytest.raises(RuntimeError, match=r"second time.*retain_graph=True"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = tg.tensor(2.0, requires_grad=True)
    y = x * x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == pytest.approx(24.0)


def test_third_derivative_of_x4_is_24x():
    x = tg.tensor(1.5, requires_grad=True)
    y = x**4
    (d1,) = tg.autograd.grad(y, x, create_graph=True)
    (d2,) = tg.autograd.grad(d1, x, create_graph=True)
    (d3,) = tg.autograd.grad(d2, x)
    assert d1.item() == pytest.approx(4 * 1.5**3)
    assert d2.item() == pytest.approx(12 * 1.5**2)
    assert d3.item() == pytest.approx(24 * 1.5)


def test_create_graph_backward_makes_grad_differentiable():
    x = tg.tensor(3.0, requires_grad=True)
    y = x**3
    y.backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.item() == pytest.approx(27.0)
    (gg,) = tg.autograd.grad(g, x)
    assert gg.item() == pytest.approx(18.0)


def test_backward_inputs_writes_only_those():
    a = tg.tensor(2.0, requires_grad=True)
    b = tg.tensor(3.0, requires_grad=True)
    (a * b).backward(inputs=[a])
    assert a.grad.item() == 3.0 and b.grad is None


def test_backward_inputs_non_leaf():
    a = tg.tensor(2.0, requires_grad=True)
    h = a * 5
    (h * h).backward(inputs=[h])
    assert h.grad.item() == pytest.approx(20.0)
    assert a.grad is None


def test_grad_returns_tuple_and_leaves_dot_grad_alone():
    a = tg.tensor(2.0, requires_grad=True)
    b = tg.tensor(3.0, requires_grad=True)
    out = tg.autograd.grad(a * b, [a, b])
    assert isinstance(out, tuple) and [g.item() for g in out] == [3.0, 2.0]
    assert a.grad is None and b.grad is None
    single = tg.autograd.grad(a * b, a)
    assert isinstance(single, tuple) and len(single) == 1


def test_grad_allow_unused_and_materialize():
    a = tg.tensor(2.0, requires_grad=True)
    b = tg.tensor(3.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        tg.autograd.grad(a * 2, [a, b], retain_graph=True)
    y = a * 2
    ga, gb = tg.autograd.grad(y, [a, b], allow_unused=True, retain_graph=True)
    assert ga.item() == 2.0 and gb is None
    ga, gb = tg.autograd.grad(y, [a, b], materialize_grads=True)
    assert gb.shape == b.shape and gb.item() == 0.0


def test_non_scalar_backward_needs_gradient():
    x = tg.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        y.backward()
    with pytest.raises(RuntimeError, match=r"\(2,\).*\(3,\)"):
        y.backward(tg.ones(2))
    y.backward(tg.tensor([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_backward_of_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.ones(2).backward(tg.ones(2))


def test_integer_tensor_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        tg.tensor([1, 2], requires_grad=True)


def test_saved_tensor_modified_in_place_raises_with_versions():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = h * h  # saves h (version 0)
    h += 1  # h is at version 1 now
    with pytest.raises(RuntimeError, match=r"is at version 1; expected version 0"):
        y.backward(tg.ones(2))


def test_inplace_on_leaf_requiring_grad_raises():
    x = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x += 1
    with tg.no_grad():
        x += 1
    assert x.item() == 2.0


def test_seed_detach_shares_version_so_backward_raises():
    """The seed's example: modifying `a` through detach() is detected at backward."""
    a = tg.ones(3, 4, requires_grad=True)
    b = tg.ones(3, 4, requires_grad=True)
    c = a * b
    t = a.detach()
    assert not t.requires_grad
    if hasattr(tg.Tensor, "__setitem__"):
        t[0] = 1  # the seed's line
    else:  # before indexing lands: any in-place op shows the same
        t.mul_(1.0)
    assert a._vc is t._vc and a._version >= 1  # detach() shares the version counter
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.backward(tg.ones(3, 4))


def test_seed_data_is_not_tracked_and_not_detected():
    """...while changes through `.data` are not detected (PyTorch's documented behaviour)."""
    a = tg.ones(3, 4, requires_grad=True)
    b = tg.ones(3, 4, requires_grad=True)
    c = a * b
    d = a.data
    assert not d.requires_grad and d.grad_fn is None
    d.mul_(2.0)  # in place, through .data: a changes too, silently
    assert a.tolist()[0][0] == 2.0
    c.backward(tg.ones(3, 4))  # no error; b's gradient uses the new value of a
    assert b.grad.tolist()[0][0] == 2.0


def test_detach_is_untracked_and_shares_storage():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    d = a.detach()
    assert not d.requires_grad and d.is_leaf
    with tg.no_grad():
        a.mul_(3.0)
    assert d.tolist() == [3.0, 6.0]


def test_chain_of_a_million_ops_backward_without_recursion_error():
    x = tg.tensor([1.0], requires_grad=True)
    was_enabled = gc.isenabled()
    gc.disable()  # the collector's passes over a million live nodes dominate otherwise
    try:
        y = x
        for _ in range(10**6):
            y = -y
        y.backward(tg.ones(1))
        del y
    finally:
        if was_enabled:
            gc.enable()
    assert x.grad.tolist() == [1.0]  # an even number of negations (time: bench/chain_scaling)


def test_float_gradient_of_other_dtype_is_cast():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.backward(tg.tensor(np.array([1.0, 1.0], dtype=np.float64)))
    assert x.grad.dtype == x.dtype
    with pytest.raises(TypeError, match="floating"):
        (x * 2).backward(tg.tensor([1, 1]))
