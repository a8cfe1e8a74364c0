"""vmap's batched path (one traced run replayed on the batch by per-op rules) against the
per-sample loop, and its fallback to the loop where a rule or a guarantee is missing."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import func as F
from tapegrad.func import batched_replay

_nnf = tg.nn.functional


def _t(x, **kw):
    return tg.tensor(np.asarray(x, dtype=np.float64), **kw)


def _loop(f, in_dims, *args):
    """The per-sample reference: f on each sample, stacked along dimension 0."""
    size = next(a.shape[d] for a, d in zip(args, in_dims, strict=True) if d is not None)
    outs = []
    for i in range(size):
        sample = [
            a if d is None else a[(slice(None),) * d + (i,)]
            for a, d in zip(args, in_dims, strict=True)
        ]
        outs.append(f(*sample))
    if isinstance(outs[0], dict):
        return {k: np.stack([o[k].numpy() for o in outs]) for k in outs[0]}
    if isinstance(outs[0], tuple):
        return tuple(np.stack([o[j].numpy() for o in outs]) for j in range(len(outs[0])))
    return np.stack([o.numpy() for o in outs])


def _batched(f, in_dims, *args):
    out = F.vmap(f, in_dims=in_dims)(*args)
    assert batched_replay.fallback_reason() is None, batched_replay.fallback_reason()
    return out


_CASES = {
    "elementwise broadcast": (
        lambda x, y: (x.sin() * y + 2.0) ** 2 / (1 + y.exp()),
        (0, None),
        ((4, 3, 5), (5,)),
    ),
    "both batched": (
        lambda x, y: tg.maximum(x, y) - tg.where(x > y, x, y * 3),
        (0, 1),
        ((4, 5), (5, 4)),
    ),
    "reductions": (lambda x: x.sum(0) + x.mean(-1).sum() + x.amax(dim=1).sum(), (1,), ((3, 4, 5),)),
    "softmax": (lambda x: _nnf.softmax(x, dim=-1) * _nnf.log_softmax(x, dim=0), (0,), ((4, 3, 5),)),
    "matmul vec @ mat": (lambda x, w: x @ w, (0, None), ((4, 3), (3, 2))),
    "matmul mat @ vec batched": (lambda w, x: w @ x, (None, 0), ((2, 3), (4, 3))),
    "matmul both batched": (lambda a, b: a @ b, (0, 0), ((4, 2, 3), (4, 3, 5))),
    "matmul vec dot vec": (lambda a, b: a @ b, (0, 0), ((4, 3), (4, 3))),
    "reshape transpose": (
        lambda x: x.reshape(6, 2).T.reshape(-1)[None, ..., None],
        (0,),
        ((4, 3, 4),),
    ),
    "linear": (
        lambda x, w, b: tg.nn.functional.linear(x, w, b).relu(),
        (0, None, None),
        ((4, 2, 3), (5, 3), (5,)),
    ),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_batched_values_equal_the_loop(name, rng):
    f, in_dims, shapes = _CASES[name]
    args = [_t(rng.standard_normal(s)) for s in shapes]
    np.testing.assert_allclose(
        _batched(f, in_dims, *args).numpy(), _loop(f, in_dims, *args), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize(
    "name",
    [
        "elementwise broadcast",
        "reductions",
        "softmax",
        "matmul vec @ mat",
        "reshape transpose",
        "linear",
    ],
)
def test_batched_per_sample_gradients_equal_the_loop(name, rng):
    """vmap(grad): the backward is traced as ops too and batched by the same rules."""
    f, in_dims, shapes = _CASES[name]
    args = [_t(rng.standard_normal(s)) for s in shapes]
    g = F.grad(lambda *a: f(*a).sum(), argnums=tuple(range(len(args))))
    got = _batched(g, in_dims, *args)
    want = _loop(g, in_dims, *args)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-10, atol=1e-12)


def test_per_sample_gradients_of_an_mlp_run_batched_and_equal_the_loop(rng):
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(6, 8), tg.nn.ReLU(), tg.nn.Linear(8, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = tg.tensor(rng.standard_normal((5, 6)).astype(np.float32))
    y = tg.tensor(np.array([0, 2, 1, 1, 2]))

    def loss(p, xb, yb):
        return tg.nn.functional.cross_entropy(F.functional_call(model, p, (xb[None],)), yb[None])

    got = _batched(F.grad(loss), (None, 0, 0), params, x, y)
    want = _loop(F.grad(loss), (None, 0, 0), params, x, y)
    for k in want:
        assert got[k].dtype == tg.float32
        np.testing.assert_allclose(got[k].numpy(), want[k], rtol=1e-6, atol=1e-7)
    losses = _batched(loss, (None, 0, 0), params, x, y).numpy()
    np.testing.assert_allclose(losses, _loop(loss, (None, 0, 0), params, x, y), rtol=1e-6)


def test_out_dims_and_unbatched_outputs(rng):
    x = _t(rng.standard_normal((4, 3)))
    c = _t(rng.standard_normal(2))
    a, b = F.vmap(lambda v: (v * 2, c + 1), out_dims=(1, 0))(x)
    assert batched_replay.fallback_reason() is None
    np.testing.assert_allclose(a.numpy(), (x.numpy() * 2).T)
    np.testing.assert_allclose(b.numpy(), np.broadcast_to(c.numpy() + 1, (4, 2)))


@pytest.mark.parametrize(
    "f, op",
    [
        (lambda x: x[tg.tensor([0, 2])] * 2, "index"),  # an index array: no rule
        (lambda x: tg.flip(x, dims=(0,)) * x, "flip"),
    ],
)
def test_ops_without_a_rule_are_looped_inside_the_batched_run(f, op, rng):
    x = _t(rng.standard_normal((4, 3)))
    got = F.vmap(f)(x).numpy()
    assert batched_replay.fallback_reason() is None
    assert op in batched_replay.looped_ops()
    np.testing.assert_allclose(got, _loop(f, (0,), x), rtol=1e-12)


def test_per_sample_gradients_of_a_cnn_loop_no_op(rng):
    tg.manual_seed(0)
    cnn = tg.nn.Sequential(
        tg.nn.Conv2d(1, 2, 3), tg.nn.Tanh(), tg.nn.Flatten(), tg.nn.Linear(2 * 4 * 4, 2)
    )
    params = {k: v.detach() for k, v in cnn.named_parameters()}
    x, y = _t(rng.standard_normal((4, 1, 6, 6))), _t(rng.standard_normal((4, 2)))
    cnn.double()
    params = {k: v.detach() for k, v in cnn.named_parameters()}

    def loss(p, xb, yb):
        return _nnf.mse_loss(F.functional_call(cnn, p, (xb[None],)), yb[None])

    got = _batched(F.grad(loss), (None, 0, 0), params, x, y)
    assert batched_replay.looped_ops() == []
    want = _loop(F.grad(loss), (None, 0, 0), params, x, y)
    for k in want:
        np.testing.assert_allclose(got[k].numpy(), want[k], rtol=1e-12, atol=1e-14)


def test_a_value_read_falls_back_and_func_still_runs_once_per_sample(rng):
    calls = []

    def f(x):
        calls.append(1)
        return x * 2 if float(x.sum()) > 0 else x * 3  # control flow on a value

    x = _t(rng.standard_normal((5, 3)))
    got = F.vmap(f)(x).numpy()
    assert "reads a tensor's value" in batched_replay.fallback_reason()
    assert len(calls) == 5  # the traced run was sample 0's
    np.testing.assert_allclose(got, _loop(f, (0,), x))
    calls.clear()
    F.vmap(lambda v: (calls.append(1), v * 2)[1])(x)
    assert batched_replay.fallback_reason() is None and len(calls) == 1  # batched: once


def test_batch_norm_in_training_runs_per_sample_and_updates_statistics_once_per_sample(rng):
    x = _t(rng.standard_normal((4, 2, 3)))
    bn, ref = tg.nn.BatchNorm1d(3).double(), tg.nn.BatchNorm1d(3).double()
    got = F.vmap(bn)(x)  # bn.weight requires grad: the result stays differentiable
    assert "tracked by a tape outside" in batched_replay.fallback_reason()
    want = tg.stack([ref(x[i]) for i in range(4)])
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())
    np.testing.assert_allclose(bn.running_mean.numpy(), ref.running_mean.numpy())
    assert int(bn.num_batches_tracked.item()) == int(ref.num_batches_tracked.item()) == 4
    (got * x).sum().backward()
    (want * x).sum().backward()
    np.testing.assert_allclose(bn.weight.grad.numpy(), ref.weight.grad.numpy())
    frozen = tg.nn.BatchNorm1d(3, affine=False).double()
    F.vmap(frozen)(x)
    assert "batch norm" in batched_replay.fallback_reason()
    assert int(frozen.num_batches_tracked.item()) == 4


def test_fallback_when_an_outer_tape_tracks_an_input_keeps_gradients(rng):
    x = _t(rng.standard_normal((4, 3)), requires_grad=True)
    F.vmap(lambda v: (v**3).sum())(x).sum().backward()
    assert "tape" in batched_replay.fallback_reason()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)


def test_randomness_same_runs_batched_and_different_per_sample():
    x = tg.zeros(3, 4)
    same = F.vmap(lambda a: a + tg.rand(4), randomness="same")(x).numpy()
    assert batched_replay.fallback_reason() is None
    np.testing.assert_allclose(same, np.broadcast_to(same[0], same.shape))
    diff = F.vmap(lambda a: a + tg.rand(4), randomness="different")(x).numpy()
    assert "random" in batched_replay.fallback_reason()
    assert not np.allclose(diff[0], diff[1])


def test_batched_results_never_share_memory_with_the_inputs(rng):
    x = _t(rng.standard_normal((4, 3)))
    for f, kw in (
        (lambda v: v, {}),
        (lambda v: v[1:], {}),
        (lambda v: v.reshape(3, 1), {"out_dims": 1}),
    ):
        out = F.vmap(f, **kw)(x)
        assert batched_replay.fallback_reason() is None
        assert not np.shares_memory(out.numpy(), x.numpy())
