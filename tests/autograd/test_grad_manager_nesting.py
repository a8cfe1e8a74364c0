"""The core GradManager's nesting rule and history, on plain tapegrad tensors.

A manager's backward is recorded by the managers that began recording before it, and by
no other; each recording's history ends with it. Values are analytic, float64.
"""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autodiff import GradManager
from tapegrad.engine.state import state


def test_three_levels_give_the_third_derivative():
    x = tg.tensor([0.3, 1.1], dtype="float64")
    g1, g2, g3 = (GradManager().attach(x) for _ in range(3))
    with g1:
        with g2:
            with g3:
                g3.backward((x**4).sum())  # 4x^3, recorded by g2 and g1
            d1 = x.grad
            x.grad = None
            g2.backward(d1)  # 12x^2, recorded by g1
        d2 = x.grad
        x.grad = None
        g1.backward(d2)
    np.testing.assert_allclose(x.grad.numpy(), 24 * np.array([0.3, 1.1]))


def test_only_earlier_managers_record_a_backward():
    x = tg.tensor([0.5], dtype="float64")
    early, mid, late = (GradManager().attach(x) for _ in range(3))
    early.record()
    mid.record()
    late.record()
    y = tg.sin(x).sum()
    mid.backward(y)  # seen by `early` (began before), hidden from `late`
    g = x.grad
    assert g.grad_fn is not None
    late.backward(g)  # late did not record mid's backward: nothing to add
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5]))
    early.backward(g)  # d cos(x)/dx added into x.grad
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5]) - np.sin([0.5]))
    assert not (early.is_recording or mid.is_recording or late.is_recording)


def test_backward_restores_the_recording_mask():
    x = tg.tensor([1.0])
    outer, inner = GradManager().attach(x), GradManager().attach(x)
    with inner, outer:
        before = state.active
        inner.backward(x * 3)
        assert state.active == before & ~inner._bit
    assert not state.active & (outer._bit | inner._bit)


def test_requires_grad_tape_is_unaffected_by_manager_order():
    x = tg.tensor([2.0], requires_grad=True)
    gm = GradManager().attach(x)
    with gm:
        y = (x * x).sum()
        gm.backward(y)  # the PyTorch tape still holds its own graph
    np.testing.assert_allclose(x.grad.numpy(), [4.0])
    x.grad = None
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0])


def test_release_takes_the_bit_off_every_recorded_node():
    w = tg.tensor([3.0])
    gm = GradManager().attach(w)
    gm.record()
    a = w * 2
    b = tg.exp(a)  # not on any path to a backward root
    gm.release()
    assert not a.grad_fn.tapes & gm._bit and not b.grad_fn.tapes & gm._bit
    with gm:
        gm.backward((a * w).sum())
    np.testing.assert_allclose(w.grad.numpy(), [6.0])


def test_group_of_one_and_type_errors():
    gm, gm2 = GradManager(), GradManager()
    group = gm | gm2
    assert (group | gm)._managers == [gm, gm2]
    with pytest.raises(TypeError, match="must be GradManagers"):
        gm | 3
    gm.record()
    with pytest.raises(RuntimeError, match="already recording"):
        (gm | gm2).record()
    gm.release()


def test_a_long_recording_keeps_its_log_small():
    from tapegrad.engine import recorder

    w = tg.tensor([1.0])
    gm = GradManager().attach(w)
    with gm:
        for _ in range(3 * recorder._COMPACT_MIN):
            _ = w * 2  # dies at once: its node too
        assert len(recorder._history[gm._bit]) <= recorder._COMPACT_MIN
        y = w * 3
        gm.backward(y)
    assert gm._bit not in recorder._history
    np.testing.assert_allclose(w.grad.numpy(), [3.0])
