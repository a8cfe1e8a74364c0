"""GradManager (MegEngine semantics) on the tape mask."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autodiff import GradManager
from tapegrad.engine import state as tape_state
from tapegrad.engine.state import state


def _np(t):
    return np.asarray(t.detach().numpy())


# ---------------------------------------------------------------- attach
def test_attach_returns_manager_keeps_order_and_is_idempotent():
    a, b, c = tg.tensor([1.0]), tg.tensor([2.0]), tg.tensor([3.0])
    gm = GradManager()
    assert gm.attach([b, a]) is gm
    gm.attach(c)
    gm.attach([a, b])  # already attached: nothing changes
    assert [id(t) for t in gm.attached_tensors()] == [id(b), id(a), id(c)]


def test_attach_again_adds_callbacks_that_run_in_order():
    x = tg.tensor([1.0, 2.0])
    calls = []

    def cb1(t, g):
        calls.append("cb1")
        return g * 2

    def cb2(t, g):
        calls.append("cb2")
        assert t is x
        return g + 1

    gm = GradManager().attach(x, callbacks=cb1)
    gm.attach(x, callbacks=[cb2])
    with gm:
        gm.backward(x * 3)
    assert calls == ["cb1", "cb2"]
    np.testing.assert_allclose(_np(x.grad), [7.0, 7.0])  # (3 * 2) + 1


def test_attach_integer_tensor_raises_and_attaches_nothing():
    x, i = tg.tensor([1.0]), tg.tensor([1, 2])
    gm = GradManager()
    with pytest.raises(TypeError, match="element 1 has dtype int64.*floating"):
        gm.attach([x, i])
    assert gm.attached_tensors() == []
    assert not x.requires_grad


def test_attached_tensors_are_held_weakly():
    gm = GradManager()
    x = tg.tensor([1.0])
    gm.attach(x)
    del x
    gc.collect()
    assert gm.attached_tensors() == []


def test_dead_manager_returns_its_tape_bit_and_untracks_tensors():
    x = tg.tensor([1.0])
    gm = GradManager().attach(x)
    bit = gm._bit
    gm.record()
    assert x._tapes & bit
    del gm
    gc.collect()
    assert not x._tapes & bit
    assert bit in tape_state._free_bits  # handed back for the next manager


# ---------------------------------------------------------------- record / backward
def test_context_manager_form():
    x = tg.tensor([1.0, 2.0, 3.0])
    gm = GradManager().attach(x)
    with gm:
        assert gm.is_recording
        y = x * x
        gm.backward(y)
        assert not gm.is_recording  # backward ends recording
    np.testing.assert_allclose(_np(x.grad), [2.0, 4.0, 6.0])


def test_record_release_form_and_release_discards():
    x = tg.tensor([1.0, 2.0])
    gm = GradManager().attach(x)
    gm.record()
    y = x * 5
    gm.release()
    assert x.grad is None
    with pytest.raises(RuntimeError, match="no computation history"):
        gm.backward(y)
    assert x.grad is None


def test_dy_defaults_to_ones_and_can_be_given():
    x = tg.tensor([1.0, 2.0])
    gm = GradManager().attach(x)
    with gm:
        gm.backward(x * x, tg.tensor([10.0, 100.0]))
    np.testing.assert_allclose(_np(x.grad), [20.0, 400.0])


def test_lists_of_y_and_dy_with_none_for_ones():
    x = tg.tensor([1.0, 2.0])
    gm = GradManager().attach(x)
    with gm:
        gm.backward([x * x, x * 3], [None, tg.tensor([1.0, 10.0])])
    np.testing.assert_allclose(_np(x.grad), [2.0 + 3.0, 4.0 + 30.0])


def test_gradients_accumulate_across_iterations_until_cleared():
    w = tg.tensor([1.0, 2.0])
    gm = GradManager().attach(w)
    for _ in range(3):
        with gm:
            gm.backward(w * 2)
    np.testing.assert_allclose(_np(w.grad), [6.0, 6.0])
    w.grad = None
    with gm:
        gm.backward(w * 2)
    np.testing.assert_allclose(_np(w.grad), [2.0, 2.0])


def test_computation_before_attach_is_ignored():
    x = tg.tensor([2.0])
    gm = GradManager()
    with gm:
        before = x * 3
        gm.attach(x)  # attached while recording: tracked from now on
        y = before * x
        gm.backward(y)
    np.testing.assert_allclose(_np(x.grad), [6.0])  # d(c * x)/dx with c = 3x constant


def test_computation_before_record_is_ignored():
    x = tg.tensor([2.0])
    gm = GradManager().attach(x)
    c = x * 3
    assert c.grad_fn is None
    with gm:
        gm.backward(c * x)
    np.testing.assert_allclose(_np(x.grad), [6.0])


def test_attached_intermediate_gets_its_gradient():
    x = tg.tensor([1.0, 2.0])
    gm = GradManager().attach(x)
    with gm:
        h = x * 3
        gm.attach(h)
        y = h * h
        gm.backward(y)
    np.testing.assert_allclose(_np(h.grad), [6.0, 12.0])  # 2h
    np.testing.assert_allclose(_np(x.grad), [18.0, 36.0])  # 2h * 3


def test_attached_intermediate_of_untracked_data_gets_its_gradient():
    data = tg.tensor([1.0, 2.0])
    gm = GradManager()
    with gm:
        h = data * 2
        gm.attach(h)
        gm.backward(h * h)
    np.testing.assert_allclose(_np(h.grad), [4.0, 8.0])
    assert data.grad is None


def test_tensor_y_does_not_depend_on_keeps_its_grad():
    x, w, u = tg.tensor([1.0]), tg.tensor([2.0]), tg.tensor([3.0])
    u.grad = tg.tensor([7.0])
    gm = GradManager().attach([x, w, u])
    with gm:
        gm.backward(x * 4)
    np.testing.assert_allclose(_np(x.grad), [4.0])
    assert w.grad is None
    np.testing.assert_allclose(_np(u.grad), [7.0])


def test_y_that_no_attached_tensor_reaches_changes_nothing():
    x = tg.tensor([1.0])
    gm = GradManager().attach(x)
    with gm:
        gm.backward(tg.tensor([5.0]) * 2)
    assert x.grad is None
    with gm:
        gm.backward()  # y=None: nothing to do, recording still ends
        assert not gm.is_recording


def test_backward_y_is_the_attached_tensor():
    x = tg.tensor([1.0, 2.0])
    gm = GradManager().attach(x)
    with gm:
        gm.backward(x)
    np.testing.assert_allclose(_np(x.grad), [1.0, 1.0])


def test_backward_does_not_write_ambient_or_record_leaves():
    a = tg.tensor([1.0], requires_grad=True)
    x = tg.tensor([2.0])
    gm = GradManager().attach(x)
    with gm:
        gm.backward(a * x)
    np.testing.assert_allclose(_np(x.grad), [1.0])
    assert a.grad is None
    # and the ambient tape can still run its own backward over the shared graph
    with gm:
        y = a * x
        gm.backward(y)
    y.backward()
    np.testing.assert_allclose(_np(a.grad), [2.0])


def test_kept_tensors_from_an_earlier_recording_are_constants():
    w = tg.tensor([2.0])
    gm = GradManager().attach(w)
    with gm:
        h = w * w  # kept across iterations, like an RNN state that isn't detached
        gm.backward(h)
    w.grad = None
    with gm:
        gm.backward(h * w)  # h is a constant now: no "backward through the graph twice"
    np.testing.assert_allclose(_np(w.grad), [4.0])


def test_record_stays_per_thread_state_and_release_restores_it():
    gm = GradManager()
    before = state.active
    gm.record()
    assert state.active & gm._bit
    gm.release()
    assert state.active == before


# ---------------------------------------------------------------- several managers
def test_side_by_side_managers_are_independent():
    x, w = tg.tensor([2.0]), tg.tensor([3.0])
    gm1, gm2 = GradManager().attach(x), GradManager().attach(w)
    with gm1, gm2:
        y = x * w
        gm1.backward(y)
        assert w.grad is None
        gm2.backward(y)
    np.testing.assert_allclose(_np(x.grad), [3.0])
    np.testing.assert_allclose(_np(w.grad), [2.0])


def test_nested_managers_give_first_plus_second_derivative():
    x = tg.tensor(2.0)
    gm1 = GradManager().attach(x)
    gm2 = GradManager().attach(x)
    with gm1:
        with gm2:
            y = x**3
            gm2.backward(y)
        np.testing.assert_allclose(_np(x.grad), 12.0)  # 3x^2, recorded by gm1
        gm1.backward(x.grad)
    np.testing.assert_allclose(_np(x.grad), 12.0 + 12.0)  # + 6x
    assert x.grad.grad_fn is None


def test_three_nested_managers_reach_third_order():
    x = tg.tensor(2.0)
    gms = [GradManager().attach(x) for _ in range(3)]
    with gms[0]:
        with gms[1]:
            with gms[2]:
                gms[2].backward(x**4)  # 4x^3 = 32
            gms[1].backward(x.grad)  # + 12x^2 = 48
        gms[0].backward(x.grad)  # d(4x^3 + 12x^2) = 12x^2 + 24x = 96
    np.testing.assert_allclose(_np(x.grad), 32.0 + 48.0 + 96.0)


# ---------------------------------------------------------------- in-place and bad input
def test_inplace_change_to_attached_tensor_while_recording_raises():
    x = tg.tensor([1.0, 2.0])
    gm = GradManager().attach(x)
    with gm, pytest.raises(RuntimeError, match="in-place operation"):
        x += 1
    x += 1  # not recording: allowed
    np.testing.assert_allclose(_np(x), [2.0, 3.0])


def test_record_twice_raises():
    gm = GradManager()
    gm.record()
    try:
        with pytest.raises(RuntimeError, match="already recording"):
            gm.record()
    finally:
        gm.release()


def test_backward_without_record_raises():
    x = tg.tensor([1.0])
    gm = GradManager().attach(x)
    with pytest.raises(RuntimeError, match="no computation history.*record"):
        gm.backward(x * 2)


def test_second_backward_in_one_recording_raises():
    x = tg.tensor([1.0])
    gm = GradManager().attach(x)
    with gm:
        y = x * 2
        gm.backward(y)
        with pytest.raises(RuntimeError, match="no computation history"):
            gm.backward(y)
    np.testing.assert_allclose(_np(x.grad), [2.0])


def test_mismatched_y_dy_lists_raise_before_anything_is_written():
    x = tg.tensor([1.0])
    x.grad = tg.tensor([5.0])
    gm = GradManager().attach(x)
    with gm:
        # the same exception types and messages as Tensor.backward (autograd/heads.py)
        with pytest.raises(RuntimeError, match="2 tensors but 1 gradients"):
            gm.backward([x * 2, x * 3], [tg.ones(1)])
        with pytest.raises(RuntimeError, match=r"gradient 0 has shape \(3,\) but tensor 0"):
            gm.backward(x * 2, tg.ones(3))
        with pytest.raises(TypeError, match=r"gradient 0 has dtype int64"):
            gm.backward(x * 2, tg.tensor([1]))
    np.testing.assert_allclose(_np(x.grad), [5.0])


def test_callback_with_wrong_shape_raises_before_anything_is_written():
    a, b = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
    a.grad = tg.tensor([10.0, 10.0])
    gm = GradManager()
    gm.attach(a)
    gm.attach(b, callbacks=lambda t, g: tg.ones(3))
    with gm, pytest.raises(RuntimeError, match=r"shape \(3,\) for a tensor of shape \(2,\)"):
        gm.backward(a * b)
    np.testing.assert_allclose(_np(a.grad), [10.0, 10.0])
    assert b.grad is None
    assert not gm.is_recording


def test_callback_returning_none_drops_the_gradient():
    # MegEngine: the callbacks' result is the gradient; None means none (later callbacks
    # get None, and .grad is left as it was)
    x, w = tg.tensor([1.0]), tg.tensor([3.0])
    seen = []
    gm = GradManager().attach(x, callbacks=[lambda t, g: None, lambda t, g: seen.append(g) or g])
    gm.attach(w)
    with gm:
        gm.backward(x * w * 2)
    assert x.grad is None and seen == [None]
    np.testing.assert_allclose(w.grad.numpy(), [2.0])


def test_attach_non_tensor_and_non_callable_callback_raise():
    gm = GradManager()
    with pytest.raises(TypeError, match="element 0 is a list"):
        gm.attach([[1.0]])
    with pytest.raises(TypeError, match="callback 0 is a int"):
        gm.attach(tg.tensor([1.0]), callbacks=[3])


def test_outside_recording_attached_tensors_are_plain():
    w = tg.tensor([1.0, 2.0])
    gm = GradManager().attach(w)
    assert (w * 2).grad_fn is None and not w.requires_grad
    with gm:
        assert w.requires_grad and (w * 2).grad_fn is not None
    assert not w.requires_grad


def test_backward_inside_a_scope_that_restores_the_mask_leaves_nothing_recording():
    w = tg.tensor([1.0, 2.0])
    gm = GradManager().attach(w)
    gm.record()
    with tg.autograd.record():  # saved the mask with the manager's bit in it
        gm.backward(w * w)
    # the scope restored that mask, but the manager released its tensors: nothing records
    assert (w * 2).grad_fn is None
    w += 1  # and an optimizer step in place is allowed
    np.testing.assert_allclose(_np(w.grad), [2.0, 4.0])
