"""Version counters: `t._version` is an int; views and detach() share the counter; every
in-place write outside the dispatcher goes through `bump_version`."""

import gc
import weakref

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.engine.versions import bump_version


def test_version_is_an_int_that_counts_in_place_writes():
    t = tg.zeros(3)
    v0 = t._version
    assert type(v0) is int
    t.add_(1.0)
    assert t._version == v0 + 1  # the PyTorch idiom
    t.mul_(2.0)
    assert t._version == v0 + 2


def test_version_is_read_only():
    t = tg.zeros(2)
    with pytest.raises(AttributeError):
        t._version = 5


def test_views_and_detach_share_the_counter():
    base = tg.zeros(2, 3)
    view = base.reshape(6)
    det = base.detach()
    view.add_(1.0)
    assert base._version == det._version == view._version == 1
    det.mul_(3.0)
    assert base._version == view._version == 2
    np.testing.assert_array_equal(base.numpy(), np.full((2, 3), 3.0))


def test_bump_version_is_seen_by_a_graph_that_saved_the_tensor():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    s = tg.tensor([3.0, 4.0])
    y = (w * s).sum()  # mul saves s
    s._data[...] = 0.0
    bump_version(s)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def _param_with_grad(values):
    p = tg.tensor([1.0, 1.0], requires_grad=True)
    (p * tg.tensor(values)).sum().backward()
    return p


@pytest.mark.parametrize(
    "clip",
    [
        lambda ps: tg.nn.utils.clip_grad_norm_(ps, max_norm=1.0),
        lambda ps: tg.nn.utils.clip_grad_value_(ps, clip_value=1.0),
    ],
    ids=["clip_grad_norm_", "clip_grad_value_"],
)
def test_gradient_clipping_bumps_the_gradient_version(clip):
    p = _param_with_grad([3.0, 4.0])
    g = p.grad
    v0 = g._version
    # a graph that saved the gradient (e.g. a gradient penalty) must notice the clipping
    g.requires_grad_(True)
    penalty = (g * g).sum()
    clip([p])
    assert p.grad is g and g._version == v0 + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        penalty.backward()


def test_clip_grad_norm_scales_and_reports_the_norm():
    p = _param_with_grad([3.0, 4.0])
    total = tg.nn.utils.clip_grad_norm_([p], max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), np.array([3.0, 4.0]) / (5.0 + 1e-6), rtol=1e-6)


def test_clip_grad_norm_below_the_limit_leaves_the_version():
    p = _param_with_grad([0.3, 0.4])
    v0 = p.grad._version
    tg.nn.utils.clip_grad_norm_([p], max_norm=1.0)
    assert p.grad._version == v0


def test_a_product_saves_a_factor_only_for_the_other_factors_gradient():
    # as PyTorch: a * c with a constant c keeps nothing of a, so changing a afterwards is fine
    x = tg.ones(3, requires_grad=True)
    a = x + 0.0
    z = a * tg.full((3,), 2.0)
    a.add_(1.0)
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
    # ... but when c wants a gradient, a is saved for it and the change is caught
    a = x + 0.0
    z = a * tg.full((3,), 2.0, requires_grad=True)
    a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_a_graph_keeps_its_leaves_alive():
    # as PyTorch: the AccumulateGrad node holds its leaf, so a hook on a leaf that only the
    # graph still references runs
    seen = []
    x = tg.ones(2, requires_grad=True)
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    y = (x * 3.0).sum()
    del x
    y.backward()
    np.testing.assert_array_equal(seen[0], [3.0, 3.0])


def test_a_backward_that_frees_the_graph_lets_go_of_its_leaves():
    # MegEngine's GradManager frees a tensor attached for one step once the step is done,
    # while the step's result lives on; retain_graph=True keeps holding it
    x = tg.ones(2, requires_grad=True)
    ref = weakref.ref(x)
    y = (x * 3.0).sum()
    y.backward(retain_graph=True)
    del x
    assert ref() is not None
    y.backward()
    assert ref() is None


def _two_graphs_of_a_dropped_leaf(register):
    """A leaf only two graphs reference, with a hook; the first graph's backward frees it."""
    seen = []
    x = tg.ones(2, requires_grad=True)
    y1, y2 = (x * 2.0).sum(), (x * 3.0).sum()
    register(x, seen)
    del x
    y1.backward()
    gc.collect()
    y2.backward()
    return seen


def test_a_hook_on_a_leaf_still_runs_in_a_second_graph_after_the_first_is_freed():
    # as PyTorch: the second graph still holds the leaf, so its hook runs there too
    seen = _two_graphs_of_a_dropped_leaf(
        lambda x, seen: x.register_hook(lambda g: seen.append(g.numpy().tolist()))
    )
    assert seen == [[2.0, 2.0], [3.0, 3.0]]
    seen = _two_graphs_of_a_dropped_leaf(
        lambda x, seen: x.register_post_accumulate_grad_hook(
            lambda t: seen.append(t.grad.numpy().tolist())
        )
    )
    assert seen == [[2.0, 2.0], [5.0, 5.0]]


def test_a_hook_registered_after_a_freeing_backward_runs_in_a_later_graph():
    seen = []
    x = tg.ones(2, requires_grad=True)
    y1, y2 = (x * 2.0).sum(), (x * 3.0).sum()
    y1.backward()  # lets go of x in the node both graphs share
    x.register_hook(lambda g: seen.append(g.numpy().tolist()))
    del x
    gc.collect()
    y2.backward()
    assert seen == [[3.0, 3.0]]
