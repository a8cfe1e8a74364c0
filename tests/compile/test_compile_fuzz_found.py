"""Mismatches between `tg.compile` and eager that tests/compile/test_fuzz_compile_vs_eager.py
found, each reduced to its smallest program (issue 14)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tapegrad as tg
from tapegrad.compile import CompileWarning


def _twice(fn, make, calls=3):
    """Run `fn` eagerly and compiled on the same fresh arguments; the leaves' gradients."""
    compiled = tg.compile(fn)
    out = []
    for k in range(calls):
        for f in (fn, compiled):
            leaves = make(k)
            f(*leaves).backward()
            out.append([None if t.grad is None else t.grad.numpy().copy() for t in leaves])
    return out


def test_a_hook_registered_on_an_argument_inside_fn_runs_at_every_call():
    # silent: replays did not register it, so from the second replay on the gradient lost
    # its factor 3 (the first replay's eager comparison registered it by chance)
    def f(x):
        x.register_hook(lambda g: g * 3.0)
        return (x * 2.0).sum()

    with pytest.warns(CompileWarning, match="hooks"):
        grads = _twice(f, lambda k: [tg.tensor([1.0, 2.0 + k], requires_grad=True)])
    for eager, compiled in zip(grads[::2], grads[1::2], strict=True):
        assert_array_equal(compiled[0], eager[0])
        assert_array_equal(compiled[0], [6.0, 6.0])


def test_a_hook_registered_on_a_parameter_inside_fn_is_eager_too():
    w = tg.tensor([0.5, -1.0], requires_grad=True)

    def f(x):
        w.register_post_accumulate_grad_hook(lambda t: None)
        return (x * w).sum()

    compiled = tg.compile(f)
    with pytest.warns(CompileWarning, match="hooks"):
        compiled(tg.ones(2))
    assert compiled.cache_info().size == 1 and compiled._cache  # the signature: eager
    assert next(iter(compiled._cache.values())).value == "eager"


@pytest.mark.parametrize("grad_mode", ["requires_grad=False", "no_grad"])
def test_backward_inside_fn_on_a_tensor_without_a_graph_raises_when_traced(grad_mode):
    # the tracing bit counted as requiring grad: the traced call's backward() did nothing
    # and returned (eager raises "not in a computational graph")
    def f(x):
        loss = (x * 2.0).sum()
        loss.backward()
        return loss

    compiled = tg.compile(f)
    for fn in (f, compiled):
        x = tg.tensor([1.0, 2.0], requires_grad=grad_mode == "no_grad")
        with pytest.raises(RuntimeError, match="not in a computational graph"):
            if grad_mode == "no_grad":
                with tg.no_grad():
                    fn(x)
            else:
                fn(x)


@pytest.mark.parametrize("method", ["register_hook", "retain_grad"])
def test_hooks_and_retain_grad_on_a_tensor_without_grad_raise_when_traced(method):
    def f(x):
        y = x * 2.0
        if method == "register_hook":
            y.register_hook(lambda g: g)
        else:
            y.retain_grad()
        return y

    compiled = tg.compile(f)
    for fn in (f, compiled):
        with pytest.raises(RuntimeError, match="doesn't require"):
            fn(tg.tensor([1.0, 2.0]))


def test_autograd_grad_inside_fn_with_an_input_without_grad_raises_when_traced():
    def f(x, w):
        y = (x * w).sum()
        return tg.autograd.grad(y, x)[0]

    compiled = tg.compile(f)
    for fn in (f, compiled):
        with pytest.raises(RuntimeError, match="does not require grad"):
            fn(tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0], requires_grad=True))


def test_requires_grad_inside_fn_is_what_eager_sees():
    seen = []

    def f(x):
        seen.append(x.requires_grad)
        return x * 2.0

    compiled = tg.compile(f)
    compiled(tg.tensor(np.ones(2)))
    assert seen == [False]


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.tanh().sum(),  # tanh keeps its output, not its input
        lambda x: tg.where(x > 0.5, x, x * 2.0).sum(),  # `x * 2.0` keeps no x
    ],
    ids=["tanh", "mul-by-a-number"],
)
def test_writing_an_input_the_backward_does_not_keep_differentiates_as_eager(fn):
    # replays raised "modified by an inplace operation" where eager differentiates: they
    # version-checked every differentiated input, and inputs only an untracked input's
    # gradient would need
    compiled = tg.compile(fn)
    for _ in range(3):
        grads = []
        for f in (fn, compiled):
            x = tg.tensor([0.25, 1.0, 2.0], requires_grad=True)
            y = f(x)
            with tg.no_grad():
                x.mul_(2.0)
            y.backward()
            grads.append(x.grad.numpy().copy())
        assert_array_equal(grads[1], grads[0])


def test_writing_an_input_the_backward_keeps_still_raises():
    compiled = tg.compile(lambda x: (x * x).sum())
    for _ in range(3):
        x = tg.tensor([0.25, 1.0], requires_grad=True)
        y = compiled(x)
        with tg.no_grad():
            x.mul_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


@pytest.mark.parametrize(
    "fn", [lambda x: x.permute(1, 0), lambda x: x + 1.0, lambda x: -x], ids=["view", "add", "neg"]
)
def test_a_second_backward_through_a_graph_that_saves_nothing_runs_as_in_eager(fn):
    # eager frees only saved values: a graph without any backpropagates twice; the compiled
    # node always saved its call and raised "backward through the graph a second time"
    compiled = tg.compile(fn)
    for _ in range(3):
        grads = []
        for f in (fn, compiled):
            x = tg.tensor([[1.0, 2.0]], requires_grad=True)
            y = f(x)
            y.sum().backward()
            y.sum().backward()
            grads.append(x.grad.numpy().copy())
        assert_array_equal(grads[1], grads[0])


def test_a_second_backward_through_a_graph_that_saves_raises_as_in_eager():
    compiled = tg.compile(lambda x: x * 2.0)  # eager's MulBackward keeps the 2.0
    for _ in range(3):
        x = tg.tensor([1.0, 2.0], requires_grad=True)
        y = compiled(x)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="second time"):
            y.sum().backward()


def test_an_output_viewing_a_leaf_refuses_an_in_place_write_as_in_eager():
    # silent: the replay's output was a fresh tensor sharing the leaf's memory, so
    # `y.mul_(2)` wrote into x with no error, no version bump, no graph
    compiled = tg.compile(lambda x: x[0])
    for _ in range(3):
        x = tg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = compiled(x)
        with pytest.raises(RuntimeError, match="view of a leaf"):
            y.mul_(2.0)
        assert_array_equal(x.detach().numpy(), np.arange(6.0).reshape(2, 3))


def test_a_write_into_an_output_viewing_a_non_leaf_input_reaches_its_gradient():
    # silent wrong gradient: the write reached x's memory but not x's graph
    def f(x):
        return x.transpose(0, 1)

    compiled = tg.compile(f)
    for _ in range(3):
        grads = []
        for fn in (f, compiled):
            a = tg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
            x = a * 1.0
            y = fn(x)
            y[0].mul_(3.0)  # column 0 of x
            assert x._version == y._version > 0
            (x * x).sum().backward()
            grads.append(a.grad.numpy().copy())
        assert_array_equal(grads[1], grads[0])
        assert_array_equal(grads[0][:, 0], 18.0 * np.array([0.0, 3.0]))


def test_an_output_viewing_another_output_writes_through_to_it():
    def f(x):
        y = x * 2.0
        return y, y[1:]

    compiled = tg.compile(f)
    for _ in range(3):
        grads = []
        for fn in (f, compiled):
            x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y, tail = fn(x)
            tail.mul_(10.0)
            assert_array_equal(y.detach().numpy(), [2.0, 40.0, 60.0])
            y.sum().backward()
            grads.append(x.grad.numpy().copy())
        assert_array_equal(grads[1], grads[0])
        assert_array_equal(grads[0], [2.0, 20.0, 20.0])


def test_a_detached_output_shares_the_inputs_version_counter():
    compiled = tg.compile(lambda x: (x * 2.0, x.detach()))
    for _ in range(3):
        x = tg.tensor([1.0, 2.0], requires_grad=True)
        y, d = compiled(x)
        d.add_(1.0)
        assert x._version == 1


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, i: x[x > 0.1].sum(),  # a boolean mask it computes
        lambda x, i: x[i].sum(),  # an integer index tensor it is given
        lambda x, i: x[i[0]].sum(),  # a 0-d one
    ],
    ids=["mask", "index-argument", "0d-index"],
)
def test_indexing_with_a_tensor_replays_the_new_index_values(fn):
    # silent: the index became NumPy arrays in getitem's parameters, constants of the
    # trace, so later calls read the first call's rows (x[mask].max() gave 0.7, not 0.8)
    compiled = tg.compile(fn)
    rng = np.random.default_rng(3)
    with pytest.warns(CompileWarning, match="indexes with a tensor"):
        for k in range(5):
            x_np = rng.standard_normal(6)
            i_np = rng.integers(0, 6, 3)
            if k < 2:  # the same index and mask: the first replay's eager check agrees
                x_np, i_np = np.abs(x_np), np.array([0, 1, 2])
            results = []
            for f in (fn, compiled):
                x = tg.tensor(x_np, requires_grad=True)
                y = f(x, tg.tensor(i_np))
                y.backward()
                results.append((y.detach().numpy().copy(), x.grad.numpy().copy()))
            for got, want in zip(results[1], results[0], strict=True):
                assert_array_equal(got, want)


def test_writing_through_a_tensor_mask_replays_the_new_mask():
    def f(x):
        y = x * 1.0
        y[x < 0] = 0.0
        return y

    compiled = tg.compile(f)
    rng = np.random.default_rng(4)
    with pytest.warns(CompileWarning):  # (the write in place is reason enough already)
        for _ in range(4):
            x = tg.tensor(rng.standard_normal(5))
            assert_array_equal(compiled(x).numpy(), np.maximum(x.numpy(), 0.0))


@pytest.mark.parametrize(
    "pick",
    [
        lambda x: x.topk(1, dim=-1)[0],
        lambda x: x.sort(dim=-1)[0][:, :1],
        lambda x: tg.kthvalue(x, 2, dim=-1)[0],
    ],
    ids=["topk", "sort", "kthvalue"],
)
def test_a_whole_step_through_sort_indices_writes_what_eager_writes(pick):
    # silent: sort and topk compute their indices from the raw arrays, so a whole step
    # (which had no first-replay check: an eager rerun would step twice) replayed the
    # first call's indices; its first replay now traces again and compares the constants
    def run(compiled):
        w = tg.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4), requires_grad=True)
        opt = tg.optim.SGD([w], lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = (pick(x * w) * 0.5).sum()
            loss.backward()
            opt.step()
            return loss

        fn = tg.compile(step) if compiled else step
        rng = np.random.default_rng(5)
        losses = [fn(tg.tensor(rng.standard_normal((3, 4)))).item() for _ in range(5)]
        return losses, w.detach().numpy().copy()

    eager = run(False)
    with pytest.warns(CompileWarning, match="two traces"):
        compiled = run(True)
    assert compiled[0] == eager[0]
    assert_array_equal(compiled[1], eager[1])


def test_a_whole_step_without_raw_values_still_replays():
    w = tg.tensor(np.ones(3), requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1)

    @tg.compile
    def step(x):
        opt.zero_grad()
        loss = (x * w).tanh().sum()
        loss.backward()
        opt.step()
        return loss

    for k in range(4):
        step(tg.tensor(np.arange(3.0) + k))
    assert step.cache_info().hits == 3 and step.eager_reason is None
    assert next(iter(step._cache.values())).verified
