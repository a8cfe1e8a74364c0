"""The engine's one hook for a tracer: `observing_rebuilt_outputs` (engine/backward.py).

vmap used to replace `engine.backward._rebuild_output` while it traced; it now passes an
observer through this hook, and nothing assigns another module's function.
"""

from __future__ import annotations

import threading

import numpy as np

import tapegrad as tg
from tapegrad import func as F
from tapegrad.engine import backward
from tapegrad.engine.state import state
from tapegrad.func import batched_replay


def _x():
    return tg.tensor(np.array([-1.0, 0.5, 2.0]), requires_grad=True)


def test_a_recorded_backward_shows_each_rebuilt_output_to_the_observer():
    x = _x()
    y = tg.relu(x)
    seen = []
    with backward.observing_rebuilt_outputs(lambda node, t: seen.append((node, t))):
        (g,) = tg.autograd.grad(y.sum(), x, create_graph=True)
    assert len(seen) == 1
    node, t = seen[0]
    assert node is y.grad_fn and t.grad_fn is node
    np.testing.assert_array_equal(t.detach().numpy(), y.detach().numpy())
    np.testing.assert_array_equal(g.detach().numpy(), [0.0, 1.0, 1.0])
    assert state.on_output_rebuilt is None


def test_a_first_order_backward_rebuilds_nothing():
    x = _x()
    seen = []
    with backward.observing_rebuilt_outputs(lambda node, t: seen.append(node)):
        tg.relu(x).sum().backward()
    assert seen == []
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0])


def test_blocks_nest_restore_on_error_and_stay_in_their_thread():
    outer, inner = [], []
    try:
        with backward.observing_rebuilt_outputs(outer.append):
            with backward.observing_rebuilt_outputs(inner.append):
                assert state.on_output_rebuilt == inner.append
                other = []
                t = threading.Thread(target=lambda: other.append(state.on_output_rebuilt))
                t.start()
                t.join()
                assert other == [None]
            assert state.on_output_rebuilt == outer.append
            raise KeyError("boom")
    except KeyError:
        pass
    assert state.on_output_rebuilt is None


def test_vmap_of_grad_traces_relus_saved_output_without_replacing_engine_functions():
    rebuild = backward._rebuild_output
    during = []

    def per_sample(x):
        during.append((backward._rebuild_output, state.on_output_rebuilt))
        return tg.func.grad(lambda v: tg.relu(v * v - 1.0).sum())(x)

    xs = np.array([[-2.0, 0.3, 1.5], [0.1, -0.9, 3.0]])
    got = F.vmap(per_sample)(tg.tensor(xs))
    assert batched_replay.fallback_reason() is None, batched_replay.fallback_reason()
    expected = np.where(xs * xs - 1.0 > 0, 2.0 * xs, 0.0)  # d/dx relu(x^2 - 1)
    np.testing.assert_allclose(got.numpy(), expected)
    fn, observer = during[0]
    assert fn is rebuild and observer is not None
    assert backward._rebuild_output is rebuild and state.on_output_rebuilt is None
