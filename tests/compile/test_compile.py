"""tg.compile: replays equal eager bit for bit, the cache, and the eager fallbacks."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad import nn
from tapegrad.compile import TRACING, CompileWarning


def _mlp(rng):
    tg.manual_seed(0)
    return nn.Sequential(
        nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 4)
    )


def _cnn():
    tg.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(6 * 2 * 2, 3),
    )
    net.train()
    with tg.no_grad():  # give BatchNorm non-trivial running statistics, then freeze them
        net(tg.tensor(np.random.default_rng(1).standard_normal((5, 1, 8, 8)), dtype=tg.float32))
    net.eval()
    return net


def _grads(net):
    return [p.grad.numpy().copy() for p in net.parameters()]


def _zero(net):
    for p in net.parameters():
        p.grad = None


def _check_against_eager(net, loss_fn, batches):
    compiled = tg.compile(loss_fn)
    for x, y in batches:
        _zero(net)
        eager = loss_fn(x, y)
        eager.backward()
        expected = _grads(net)
        _zero(net)
        out = compiled(x, y)
        out.backward()
        assert_array_equal(
            out.numpy() if not out.requires_grad else out.detach().numpy(), eager.detach().numpy()
        )
        for got, want in zip(_grads(net), expected, strict=True):
            assert_array_equal(got, want)
    return compiled


def test_mlp_loss_and_gradients_equal_eager_bitwise(rng):
    net = _mlp(rng)

    def loss_fn(x, y):
        return F.cross_entropy(net(x), y)

    batches = [
        (tg.tensor(rng.standard_normal((6, 8)), dtype=tg.float32), tg.tensor(rng.integers(0, 4, 6)))
        for _ in range(4)
    ]
    compiled = _check_against_eager(net, loss_fn, batches)
    info = compiled.cache_info()
    assert (info.hits, info.misses, info.size) == (3, 1, 1)
    assert compiled(*batches[0]).grad_fn.name() == "CompiledFunctionBackward"


def test_cnn_with_eval_batchnorm_equals_eager_bitwise(rng):
    net = _cnn()

    def loss_fn(x, y):
        return F.cross_entropy(net(x), y)

    batches = [
        (
            tg.tensor(rng.standard_normal((3, 1, 8, 8)), dtype=tg.float32),
            tg.tensor(rng.integers(0, 3, 3)),
        )
        for _ in range(3)
    ]
    compiled = _check_against_eager(net, loss_fn, batches)
    assert compiled.cache_info().hits == 2


def test_input_gradients_match_finite_differences_in_float64(rng):
    w = tg.tensor(rng.standard_normal((3, 2)), requires_grad=True)

    @tg.compile
    def f(x):
        h = (x @ w).sin() * x.sum(1, keepdim=True)
        return (h * h + h.exp()).mean()

    x0 = rng.standard_normal((4, 3))
    for _ in range(2):  # trace, then replay
        x = tg.tensor(x0, requires_grad=True)
        f(x).backward()
    eps, numeric = 1e-6, np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        up, down = x0.copy(), x0.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (f(tg.tensor(up)).item() - f(tg.tensor(down)).item()) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)
    assert f.cache_info().misses == 2  # with and without requires_grad: two signatures


def test_new_signature_retraces_and_the_cache_is_lru_bounded(rng):
    calls = []

    @tg.compile(maxsize=2)
    def f(x, scale):
        calls.append(1)
        return x * scale + 1.0

    a, b = tg.ones(3), tg.ones(2, 2)
    assert_array_equal(f(a, 2.0).numpy(), np.full(3, 3.0, np.float32))
    assert_array_equal(f(a, 2.0).numpy(), np.full(3, 3.0, np.float32))
    assert_array_equal(f(a, 5.0).numpy(), np.full(3, 6.0, np.float32))  # a scalar's value
    assert f.cache_info() == (1, 2, 2, 2)
    f(b, 2.0)  # third signature: the least recently used one (a, 2.0) goes
    assert f.cache_info().size == 2
    f(a, 5.0)
    assert f.cache_info().hits == 2
    f(a, 2.0)
    assert f.cache_info().misses == 4
    assert len(calls) == 6  # Python ran to trace (4) and to check two first replays
    assert_array_equal(f(tg.full((3,), 2.0), 2.0).numpy(), np.full(3, 5.0, np.float32))


def test_training_mode_and_grad_mode_are_part_of_the_signature(rng):
    net = _cnn()
    fast = tg.compile(net)
    x = tg.tensor(rng.standard_normal((2, 1, 8, 8)), dtype=tg.float32)
    eval_out = fast(x).detach().numpy()
    assert_array_equal(fast(x).detach().numpy(), eval_out)
    with tg.no_grad():
        y = fast(x)
    assert y.grad_fn is None and not y.requires_grad
    assert_array_equal(y.numpy(), eval_out)
    assert fast.cache_info().misses == 2
    net.train()  # BatchNorm now updates its statistics: a new signature, replayed too
    twin = _cnn()
    twin.train()
    for _ in range(3):
        assert_array_equal(fast(x).detach().numpy(), twin(x).detach().numpy())
    assert net[1].num_batches_tracked.item() == twin[1].num_batches_tracked.item() == 4
    assert_array_equal(net[1].running_mean.numpy(), twin[1].running_mean.numpy())
    assert_array_equal(net[1].running_var.numpy(), twin[1].running_var.numpy())
    assert net[1].running_mean._version == twin[1].running_mean._version
    net.eval()  # the eval signature is still compiled
    hits = fast.cache_info().hits
    assert_array_equal(fast(x).detach().numpy(), net(x).detach().numpy())
    assert fast.cache_info().hits == hits + 1


def test_value_read_runs_eagerly_with_one_warning_naming_the_line():
    @tg.compile
    def f(x):
        if (x.sum() > 0).item():  # the value decides the control flow
            return x * 2.0
        return x * -1.0

    pos, neg = tg.ones(3), -tg.ones(3)
    with pytest.warns(CompileWarning, match=r"test_compile\.py:\d+") as record:
        assert_array_equal(f(pos).numpy(), np.full(3, 2.0, np.float32))
    assert len(record) == 1 and ".item()" in str(record[0].message)
    assert_array_equal(f(neg).numpy(), np.full(3, 1.0, np.float32))  # no second warning
    assert "test_compile.py" in f.eager_reason


@pytest.mark.parametrize("read", [bool, lambda t: t.numpy(), lambda t: t.tolist(), float])
def test_every_value_read_is_noticed(read):
    def f(x):
        y = x * 3.0
        read(y.sum() if read in (bool, float) else y)
        return y

    fast = tg.compile(f)
    with pytest.warns(CompileWarning, match="reads a tensor's value"):
        fast(tg.ones(2))
    assert_array_equal(fast(tg.ones(2)).numpy(), np.full(2, 3.0, np.float32))


def test_fn_sees_requires_grad_as_eager_does():
    seen = []

    @tg.compile
    def f(x):
        seen.append(x.requires_grad)
        return x * 2.0

    f(tg.ones(2))
    f(tg.ones(2, requires_grad=True))
    assert seen == [False, True]


def test_dropout_replays_with_a_fresh_mask_from_the_same_stream_as_eager():
    drop = nn.Dropout(0.5)
    drop.train()
    fast = tg.compile(drop)

    def masks(f):
        tg.manual_seed(3)
        x = tg.ones(100, requires_grad=True)
        outs = [f(x) for _ in range(4)]
        sum(o.sum() * (k + 1) for k, o in enumerate(outs)).backward()
        return [o.detach().numpy() for o in outs] + [x.grad.numpy()]

    want, got = masks(drop), masks(fast)
    assert fast.cache_info().hits == 3 and fast.eager_reason is None
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(got[1], got[2])  # a fresh mask per call, as eager


def test_other_random_numbers_run_eagerly():
    fast = tg.compile(lambda x: x + tg.randn(100))
    with pytest.warns(CompileWarning, match="random"):
        fast(tg.ones(100))
    a, b = fast(tg.ones(100)).numpy(), fast(tg.ones(100)).numpy()
    assert not np.array_equal(a, b)  # fresh numbers per call, as eager


def test_higher_order_gradients_fall_back_to_eager(rng):
    f = tg.compile(lambda x: (x**3).sum())
    x0 = rng.standard_normal(4)
    for _ in range(2):
        x = tg.tensor(x0, requires_grad=True)
        (g,) = tg.autograd.grad(f(x), x, create_graph=True)
        (gg,) = tg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x0**2, rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), 6 * x0, rtol=1e-12)
    assert f.cache_info().hits == 1


def test_outputs_structures_kwargs_and_shared_inputs(rng):
    @tg.compile
    def f(x, y, *, scale=1.0):
        s = x * y
        return {"sum": s.sum() * scale, "pair": (s, x)}

    x = tg.tensor(rng.standard_normal(3), requires_grad=True)
    y = tg.tensor(rng.standard_normal(3), requires_grad=True)
    for _ in range(2):
        x.grad = y.grad = None
        out = f(x, y, scale=2.0)
        assert out["pair"][1] is x
        (out["sum"] + out["pair"][0].sum()).backward()
    assert_array_equal(x.grad.numpy(), (3 * y.detach()).numpy())
    x.grad = None
    out = f(x, x, scale=2.0)  # the same tensor twice is its own signature
    out["sum"].backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy(), rtol=1e-12)
    assert f.cache_info().misses == 2


def test_backward_twice_needs_retain_graph_as_in_eager(rng):
    f = tg.compile(lambda x: (x * x).sum())
    x = tg.tensor(rng.standard_normal(3), requires_grad=True)
    f(x)
    y = f(x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy(), rtol=1e-12)
    z = f(x)
    z.backward()
    with pytest.raises(RuntimeError, match="second time"):
        z.backward()


def test_compiled_method_and_no_tracing_bit_left_behind(rng):
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(tg.ones(3) * 2.0)

        @tg.compile
        def forward(self, x):
            return x * self.w

    m = Scale()
    x = tg.ones(3)
    for _ in range(2):
        out = m(x)
    assert_array_equal(out.detach().numpy(), np.full(3, 2.0, np.float32))
    out.sum().backward()
    assert_array_equal(m.w.grad.numpy(), np.ones(3, np.float32))
    assert not x.requires_grad and not x._tapes & TRACING and not m.w._tapes & TRACING
    with tg.no_grad():
        m.w.mul_(3.0)  # a parameter changed outside: the replay reads its new value
    assert_array_equal(m(x).detach().numpy(), np.full(3, 6.0, np.float32))


def test_errors_name_the_function():
    with pytest.raises(TypeError, match="tg.compile"):
        tg.compile(3)
    with pytest.raises(ValueError, match="maxsize"):
        tg.compile(lambda x: x, maxsize=0)


def test_detach_and_data_inside_fn_are_replayed_with_fresh_values(rng):
    @tg.compile
    def f(x):
        return (x * x.detach()).sum() + (x * x.data).sum() * 0.5, x.detach() + 1.0

    for _ in range(3):
        x0 = rng.standard_normal(4)
        x = tg.tensor(x0, requires_grad=True)
        total, shifted = f(x)
        total.backward()
        np.testing.assert_allclose(total.item(), 1.5 * (x0 * x0).sum(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), 1.5 * x0, rtol=1e-12)  # no grad via detach
        assert_array_equal(shifted.numpy(), x0 + 1.0)
        assert shifted.grad_fn is None and not shifted.requires_grad
    assert f.cache_info().hits == 2


def test_reading_a_grad_inside_fn_runs_that_signature_eagerly(rng):
    w = tg.tensor(rng.standard_normal(3), requires_grad=True)
    (w * w).sum().backward()
    norm = tg.compile(lambda scale: (w.grad * w.grad).sum() * scale)
    with pytest.warns(CompileWarning, match=r"\.grad"):
        first = norm(2.0)
    w.grad = None
    (w * 3.0).sum().backward()  # a new .grad tensor: the eager rerun must see it
    np.testing.assert_allclose(norm(2.0).item(), 2.0 * 9.0 * 3, rtol=1e-12)
    assert first.item() != norm(2.0).item()


def test_array_parameters_from_traced_tensors_are_read_at_each_call(rng):
    @tg.compile
    def loss(logits, y, w):
        return F.cross_entropy(logits, y, weight=w)

    y = tg.tensor(rng.integers(0, 3, 5))
    for _ in range(3):
        logits = tg.tensor(rng.standard_normal((5, 3)), requires_grad=True)
        w = tg.tensor(rng.uniform(0.5, 2.0, 3))
        got = loss(logits, y, w)
        got.backward()
        g = logits.grad.numpy().copy()
        logits.grad = None
        want = F.cross_entropy(logits, y, weight=w)
        want.backward()
        assert_array_equal(got.detach().numpy(), want.detach().numpy())
        assert_array_equal(g, logits.grad.numpy())
    assert loss.cache_info().hits == 2


def test_a_value_computed_outside_the_op_table_is_caught_at_the_first_replay(rng):
    from tapegrad.tensor import _wrap

    @tg.compile
    def f(x):
        hidden = _wrap(x._data * 2.0)  # library-style code that skips the dispatcher
        return x + hidden

    f(tg.ones(3))
    with pytest.warns(CompileWarning, match="replay differs from eager"):
        out = f(tg.full((3,), 2.0))
    assert_array_equal(out.numpy(), np.full(3, 6.0, np.float32))
    assert_array_equal(f(tg.full((3,), 3.0)).numpy(), np.full(3, 9.0, np.float32))


@pytest.mark.parametrize("inlining", [True, False])
def test_elementwise_chain_equals_eager_bitwise_with_and_without_inlining(
    rng, monkeypatch, inlining
):
    from tapegrad.compile import inline

    monkeypatch.setattr(inline, "ENABLED", inlining)

    def chain(x, y):
        h = (x * 2.0 + y).tanh() - x / (y * y + 1.0)
        h = (-h).exp().sin() + h.cos() * (h * h + 1.0).log() + (h * h + 1.0).sqrt()
        return (h * y).sum()

    fast = tg.compile(chain)
    for _ in range(3):
        x0, y0 = rng.standard_normal(16), rng.standard_normal(16)
        grads = []
        for fn in (chain, fast):
            x = tg.tensor(x0, dtype=tg.float32, requires_grad=True)
            y = tg.tensor(y0, dtype=tg.float32, requires_grad=True)
            out = fn(x, y)
            out.backward()
            grads.append((out.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
        for got, want in zip(grads[1], grads[0], strict=True):
            assert_array_equal(got, want)
    (program,) = fast._cache.values()
    assert ("= U" in program.forward_source) is inlining


def test_in_place_ops_inside_fn_run_that_signature_eagerly():
    @tg.compile
    def f(x):
        h = x * 2.0
        h.add_(1.0)
        return h

    with pytest.warns(CompileWarning, match="in place"):
        f(tg.ones(3))
    assert_array_equal(f(tg.full((3,), 2.0)).numpy(), np.full(3, 5.0, np.float32))


def test_an_error_inside_fn_leaves_tensors_and_tensor_methods_as_they_were():
    from tapegrad.tensor import Tensor

    item = Tensor.__dict__["item"]
    x = tg.ones(3, requires_grad=True)

    @tg.compile
    def f(x):
        (x * 2.0).reshape(7)  # wrong shape: raises inside the trace
        return x

    with pytest.raises(Exception, match="reshape|shape"):
        f(x)
    assert x._tapes & TRACING == 0 and Tensor.__dict__["item"] is item
    assert f.cache_info().size == 0


def test_dead_ops_are_left_out_of_the_replay():
    def f(x):
        unused = (x * 3.0).sum()  # noqa: F841 - computed and never used
        return x.exp()

    fast = tg.compile(f)
    fast(tg.ones(4))
    assert_array_equal(fast(tg.full((4,), 2.0)).numpy(), np.exp(np.full(4, 2.0, np.float32)))
    (program,) = fast._cache.values()
    assert program.n_ops == 3
    assert program.forward_source.count(" = ") == 1  # only exp is computed


class _ScaledSplit(tg.autograd.Function):
    """Two outputs, a non-tensor argument and saved tensors: x*k split in halves."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        n = x.shape[-1] // 2
        return x[..., :n] * k, (x[..., n:] * k).exp()

    @staticmethod
    def backward(ctx, ga, gb):
        (x,) = ctx.saved_tensors
        n = x.shape[-1] // 2
        return tg.cat([ga * ctx.k, gb * ctx.k * (x[..., n:] * ctx.k).exp()], -1), None


def test_custom_functions_replay_their_forward_and_backward(rng):
    w = tg.tensor(rng.standard_normal((4, 6)), requires_grad=True)

    def f(x):
        a, b = _ScaledSplit.apply(x @ w, 0.5)
        return (a.tanh() * b).sum() + b.mean()  # both outputs used, b twice

    def g(x):
        a, _ = _ScaledSplit.apply(x @ w, 2.0)
        return a.sum()  # one output unused: its gradient reaches backward as zeros

    for fn in (f, g):
        fast = tg.compile(fn)
        for _ in range(3):
            x = tg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
            want = fn(x)
            want.backward()
            want_grads = [x.grad.numpy().copy(), w.grad.numpy().copy()]
            x.grad = w.grad = None
            got = fast(x)
            got.backward()
            np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
            np.testing.assert_array_equal(x.grad.numpy(), want_grads[0])
            np.testing.assert_array_equal(w.grad.numpy(), want_grads[1])
            w.grad = None
        assert fast.cache_info().hits == 2 and fast.eager_reason is None
        assert got.grad_fn.name() == "CompiledFunctionBackward"


def test_a_custom_function_of_the_mxnet_style_runs_eagerly():
    class Double(tg.autograd.Function):
        def forward(self, x):
            return x * 2.0

        def backward(self, g):
            return g * 2.0

    fast = tg.compile(lambda x: Double()(x).sum())
    with pytest.warns(CompileWarning, match="MXNet-style Function Double"):
        fast(tg.ones(3, requires_grad=True))


def test_a_higher_order_backward_through_dropout_reuses_the_calls_masks(rng):
    drop = nn.Dropout(0.5)
    x0 = rng.standard_normal(64)

    def f(x):
        return (drop(x) ** 3).sum()

    def run(fn):
        tg.manual_seed(5)
        out = []
        for _ in range(3):
            x = tg.tensor(x0, requires_grad=True)
            (g,) = tg.autograd.grad(fn(x), x, create_graph=True)
            (gg,) = tg.autograd.grad(g.sum(), x)
            out += [g.detach().numpy(), gg.numpy()]
        return out + [np.array(tg.random.generator().random())]

    fast = tg.compile(f)
    for a, b in zip(run(fast), run(f), strict=True):
        np.testing.assert_array_equal(a, b)
    assert fast.cache_info().hits == 2
