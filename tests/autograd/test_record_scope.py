"""The MXNet record scope: flags, attach_grad / mark_variables, grad_req, backward, grad."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import autograd as ag


def _flags():
    return ag.is_recording(), ag.is_training()


# ---------------------------------------------------------------- flags, as MXNet sets them
def test_flags_outside_every_scope():
    assert _flags() == (False, False)


@pytest.mark.parametrize(
    "scopes, expected",
    [
        ([lambda: ag.record()], (True, True)),
        ([lambda: ag.record(train_mode=False)], (True, False)),
        ([lambda: ag.record(), lambda: ag.predict_mode()], (True, False)),
        ([lambda: ag.train_mode()], (False, True)),
        ([lambda: ag.predict_mode()], (False, False)),
        ([lambda: ag.record(), lambda: ag.pause()], (False, False)),
        ([lambda: ag.record(), lambda: ag.pause(train_mode=True)], (False, True)),
        ([lambda: ag.record(False), lambda: ag.train_mode()], (True, True)),
        ([lambda: ag.pause(), lambda: ag.record()], (True, True)),
    ],
)
def test_flags_in_nested_scopes(scopes, expected):
    def enter(i):
        if i == len(scopes):
            assert _flags() == expected
            return
        with scopes[i]():
            enter(i + 1)

    enter(0)
    assert _flags() == (False, False)


def test_scope_restores_on_exception_and_is_a_decorator():
    with pytest.raises(KeyError), ag.record():
        raise KeyError("boom")
    assert _flags() == (False, False)

    @ag.record(train_mode=False)
    def inside():
        return _flags()

    assert inside() == (True, False)
    assert _flags() == (False, False)


def test_constructing_a_scope_changes_nothing():
    scope = ag.record()
    assert _flags() == (False, False)
    with scope:
        assert _flags() == (True, True)


def test_set_recording_and_set_training_return_the_previous_value():
    assert ag.set_recording(True) is False
    try:
        assert ag.is_recording()
        assert ag.set_recording(True) is True
    finally:
        assert ag.set_recording(False) is True
    assert not ag.is_recording()
    assert ag.set_training(True) is False
    assert ag.set_training(False) is True
    assert _flags() == (False, False)


def test_set_recording_pair_keeps_ambient_tape_as_it_was():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    prev = ag.set_recording(True)
    ag.set_recording(prev)
    assert (a * 2).grad_fn is not None  # requires_grad still records at top level
    with tg.no_grad():
        prev = ag.set_recording(True)
        assert (a * 2).grad_fn is not None  # record() re-enables recording inside no_grad
        ag.set_recording(prev)
        assert (a * 2).grad_fn is None  # and no_grad holds again afterwards


def test_pause_stops_every_tape():
    a = tg.tensor([1.0], requires_grad=True)
    with ag.record(), ag.pause():
        assert (a * 2).grad_fn is None


# ---------------------------------------------------------------- attach_grad / mark_variables
def test_attach_grad_gives_zero_grad_at_once():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.attach_grad() is None
    assert x.grad_req == "write"
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 2)))
    assert x.grad.dtype == x.dtype and x.grad.grad_fn is None
    assert x.requires_grad and x.is_leaf


def test_invalid_grad_req_raises_listing_the_valid_ones():
    x = tg.tensor([1.0])
    with pytest.raises(ValueError, match=r"'write', 'add' or 'null', got 'sum'"):
        x.attach_grad("sum")
    assert x.grad is None and not x.requires_grad  # nothing changed
    with pytest.raises(ValueError, match="'write', 'add' or 'null'"):
        ag.mark_variables([x], [tg.zeros(1)], "overwrite")
    assert x.grad is None


def test_attach_grad_refuses_integer_tensors():
    with pytest.raises(TypeError, match="floating point.*int64"):
        tg.tensor([1, 2]).attach_grad()


def test_computation_outside_record_or_inside_pause_is_a_constant():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    c = x * 3  # outside record(): a constant
    with ag.record():
        with ag.pause():
            p = x * 5  # inside pause(): a constant too
        y = c * x + p * x
    assert c.grad_fn is None and p.grad_fn is None
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), (3 * x.numpy() + 5 * x.numpy()))


def test_grad_req_write_overwrites():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    with ag.record():
        y = x * 10
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 10.0])


def test_grad_req_add_accumulates():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad(grad_req="add")
    with ag.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])  # doubled


def test_grad_req_null_alone_raises_and_leaves_grad_none():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad(grad_req="null")
    assert x.grad is None
    with ag.record():
        y = x * x
    with pytest.raises(RuntimeError, match="not in a computational graph"):
        y.backward()
    assert x.grad is None


def test_grad_req_null_next_to_a_write_variable():
    x, w = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
    x.attach_grad("null")
    w.attach_grad()
    with ag.record():
        y = x * w
    y.backward()
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])


def test_mark_variables_uses_given_buffers_and_reqs():
    x, w = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
    gx, gw = tg.zeros(2), tg.ones(2)
    ag.mark_variables([x, w], [gx, gw], ["write", "add"])
    assert x.grad is gx and w.grad is gw
    with ag.record():
        y = x * w
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 3.0])  # 1 + x


def test_mark_variables_single_tensor_form():
    x = tg.tensor([2.0])
    ag.mark_variables(x, tg.zeros(1))
    with ag.record():
        y = x * x
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0])


@pytest.mark.parametrize(
    "grads, reqs, err, match",
    [
        ([tg.zeros(2)], "write", ValueError, "2 variables, 1 gradients"),
        ([tg.zeros(2), tg.zeros(3)], "write", ValueError, r"gradient 1 has shape \(3,\)"),
        ([tg.zeros(2), tg.zeros(2)], ["write"], ValueError, "1 grad_reqs"),
        ([tg.zeros(2), np.zeros(2)], "write", TypeError, "gradient 1 is a ndarray"),
    ],
)
def test_mark_variables_bad_input_marks_nothing(grads, reqs, err, match):
    x, w = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
    with pytest.raises(err, match=match):
        ag.mark_variables([x, w], grads, reqs)
    assert x.grad is None and w.grad is None and not x.requires_grad and not w.requires_grad


def test_attach_grad_on_a_computed_tensor_starts_a_new_graph():
    a = tg.tensor([1.0, 2.0])
    a.attach_grad()
    with ag.record():
        b = a * 3
        b.attach_grad()
        c = b * b
    c.backward()
    np.testing.assert_allclose(b.grad.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(a.grad.numpy(), [0.0, 0.0])  # the graph was cut at b


# ---------------------------------------------------------------- backward
def test_non_scalar_head_gets_ones_only_in_the_record_scope():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (a * a).backward()


def test_backward_of_unrecorded_tensor_raises():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    y = x * 2  # forgot record()
    with pytest.raises(RuntimeError, match="not in a computational graph.*autograd.record"):
        y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_backward_inside_record_works_and_is_not_recorded():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x * x
        y.backward()
        assert x.grad.grad_fn is None and not x.grad.requires_grad
        z = x * 2  # recording goes on after the backward
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])
    assert z.grad_fn is not None


def test_backward_out_grad_keyword_and_head_gradient_shape_error():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x
    with pytest.raises(RuntimeError, match=r"\(3,\).*\(2,\)"):
        y.backward(out_grad=tg.ones(3), retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    y.backward(out_grad=tg.tensor([10.0, 100.0]))
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 400.0])


def test_second_backward_without_retain_graph_names_the_fix():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_several_heads_with_per_head_gradients():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y1 = x * x
        y2 = x * 3
    ag.backward([y1, y2], [None, tg.tensor([1.0, 10.0])])
    np.testing.assert_allclose(x.grad.numpy(), [2.0 + 3.0, 4.0 + 30.0])


def test_backward_train_mode_sets_mode_during_backward_only():
    seen = []
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    for train in (True, False):
        with ag.record():
            y = x * x
            y.register_hook(lambda g: seen.append(ag.is_training()))
            z = y * 2
        z.backward(train_mode=train)
    assert seen == [True, False]
    assert _flags() == (False, False)


# ---------------------------------------------------------------- autograd.grad
def test_grad_does_not_touch_dot_grad_and_supports_mxnet_names():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x * x
    (dx,) = ag.grad(heads=y, variables=[x], head_grads=tg.tensor([1.0, 2.0]), retain_graph=True)
    np.testing.assert_allclose(dx.numpy(), [3.0, 24.0])
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    (dx,) = ag.grad(y, [x], None, None, False, train_mode=False)
    np.testing.assert_allclose(dx.numpy(), [3.0, 12.0])


def test_grad_create_graph_can_be_differentiated_again():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x * x
        (dx,) = ag.grad(y, [x], create_graph=True)
    dx.backward()
    np.testing.assert_allclose(dx.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])  # 6x


def test_grad_of_a_variable_the_heads_do_not_reach_raises():
    x, w = tg.tensor([1.0]), tg.tensor([2.0])
    x.attach_grad()
    w.attach_grad()
    with ag.record():
        y = x * 2
    with pytest.raises(RuntimeError, match="not have been used in the graph"):
        ag.grad(y, [x, w])


def test_inplace_change_to_a_variable_raises_only_while_recording():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with ag.record(), pytest.raises(RuntimeError, match="in-place operation"):
        x += 1
    x += 1  # outside record(): the record tape is not active
    np.testing.assert_allclose(x.numpy(), [2.0, 3.0])


def test_create_graph_records_the_backward_even_outside_record():
    # MXNet's Backward sets is_recording = create_graph; PyTorch enables grad mode likewise
    x = tg.tensor([0.5, 1.0])
    x.attach_grad()
    with ag.record():
        y = tg.sin(x)
    (dx,) = ag.grad(y, [x], create_graph=True)
    assert not ag.is_recording()
    dx.backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x.numpy()), rtol=1e-6)
    a = tg.tensor(2.0, requires_grad=True)
    b = a**3
    with tg.no_grad():
        (da,) = ag.grad(b, a, create_graph=True)
    assert da.grad_fn is not None
    np.testing.assert_allclose(ag.grad(da, a)[0].item(), 12.0)
