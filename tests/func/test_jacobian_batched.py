"""jacrev/jacfwd/hessian map their basis in one batched `vmap` (as torch.func does), and
`vmap(vjp_fn)` runs batched: values against torch.func where installed and finite
differences in float64; the batched path is asserted, not just the values."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import func as F
from tapegrad.func import batched_replay

_vmap_module = importlib.import_module("tapegrad.func.vmap")  # (F.vmap is the function)


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # torch.func's jit import
    return torch


def _fd_jacobian(f, x, eps=1e-6):
    """d f(x)[i...] / d x[j...] by central differences (float64 NumPy in and out)."""
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = eps
        cols.append((f(x + e) - f(x - e)) / (2 * eps))
    return np.stack(cols, -1).reshape(np.shape(cols[0]) + x.shape)


RNG = np.random.default_rng(3)
W1 = RNG.standard_normal((6, 4)) / 2
B1 = RNG.standard_normal(6) / 2
W2 = RNG.standard_normal((3, 6)) / 2
X = RNG.standard_normal(4)


def _mlp(lib, w1=W1, b1=B1, w2=W2):
    a, b, c = (lib.tensor(v) for v in (w1, b1, w2))

    def f(x):
        # relu, sigmoid and tanh: backward rules that read their saved output (rebuilt)
        h = lib.relu(x @ a.T + b)
        return lib.tanh(h @ c.T) * lib.sigmoid(x[:3]).exp()

    return f


def _np_mlp(x):
    h = np.maximum(x @ W1.T + B1, 0)
    return np.tanh(h @ W2.T) * np.exp(1 / (1 + np.exp(-x[:3])))


@pytest.fixture
def replays(monkeypatch):
    """What each batched attempt of vmap returned: True for a batched result, else the
    reason it ran per sample."""
    got: list[object] = []
    original = batched_replay.run_traced_batched

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        got.append(out.why if isinstance(out, batched_replay.Fallback) else True)
        return out

    monkeypatch.setattr(_vmap_module, "run_traced_batched", spy)
    return got


def test_jacrev_is_one_batched_vmap_of_vjp_fn(replays):
    J = F.jacrev(_mlp(tg))(tg.tensor(X))
    assert replays == [True]  # one vmapped pass over the 3 rows, no per-sample loop
    assert not J.requires_grad
    np.testing.assert_allclose(J.numpy(), _fd_jacobian(_np_mlp, X), rtol=1e-6, atol=1e-8)


def test_jacfwd_is_one_batched_vmap_of_jvp(replays):
    calls = []
    f = _mlp(tg)

    def counted(x):
        calls.append(1)
        return f(x)

    J = F.jacfwd(counted)(tg.tensor(X))
    assert replays == [True]
    assert len(calls) == 1  # traced once for the 4 tangents (it ran once per tangent)
    np.testing.assert_allclose(J.numpy(), _fd_jacobian(_np_mlp, X), rtol=1e-6, atol=1e-8)


def test_hessian_is_batched_and_matches_torch_and_finite_differences(replays):
    torch = _torch()
    f = _mlp(tg)
    H = F.hessian(lambda x: (f(x) ** 2).sum())(tg.tensor(X))
    assert replays[-1] is True  # the outer jacfwd's vmap over the 4 tangents
    assert not H.requires_grad
    tf = _mlp(torch)
    Ht = torch.func.hessian(lambda x: (tf(x) ** 2).sum())(torch.tensor(X))
    np.testing.assert_allclose(H.numpy(), Ht.numpy(), rtol=1e-10, atol=1e-12)
    g = lambda a: F.grad(lambda x: (f(x) ** 2).sum())(tg.tensor(a)).numpy()  # noqa: E731
    np.testing.assert_allclose(H.numpy(), _fd_jacobian(g, X), rtol=1e-5, atol=1e-7)


def test_vmap_of_vjp_fn_is_batched_with_rebuilt_saved_outputs(replays):
    # vjp_fn holds the graph of a vjp that has returned: its tensors track a tape, its
    # saved outputs (relu, tanh, sigmoid, exp) are rebuilt inside the trace; neither asks
    # the loop for a graph (it fell back: "a captured tensor is tracked by a tape outside")
    torch = _torch()
    out, vjp_fn = F.vjp(_mlp(tg), tg.tensor(X))
    (rows,) = F.vmap(vjp_fn)(tg.eye(3, dtype=tg.float64))
    assert replays == [True]
    assert not rows.requires_grad
    _, tvjp = torch.func.vjp(_mlp(torch), torch.tensor(X))
    (trows,) = torch.func.vmap(tvjp)(torch.eye(3, dtype=torch.float64))
    np.testing.assert_allclose(rows.numpy(), trows.numpy(), rtol=1e-12, atol=1e-14)


def test_vmap_of_jvp_maps_the_tangent():
    # the tangents' ops ran on arrays, untraced: every sample got sample 0's tangent
    x = tg.tensor([0.5, 1.0, -2.0], dtype=tg.float64)
    got = F.vmap(lambda t: F.jvp(tg.sin, (x,), (t,))[1])(tg.eye(3, dtype=tg.float64))
    np.testing.assert_allclose(got.numpy(), np.diag(np.cos(x.numpy())), rtol=1e-12)
    cube = F.grad(lambda x: (x**3).sum())
    got = F.vmap(lambda t: F.jvp(cube, (x,), (t,))[1])(tg.eye(3, dtype=tg.float64))
    np.testing.assert_allclose(got.numpy(), np.diag(6 * x.numpy()), rtol=1e-12)
    assert not got.requires_grad  # no graph kept at top level (torch.func's is plain)


def test_jacobians_of_trees_match_torch(replays):
    torch = _torch()

    def make(lib):
        def f(p, x):
            y = lib.tanh(x @ p["w"].T + p["b"])
            return {"y": y, "s": (y * x[:3]).sum().reshape(1)}

        return f

    p = {"w": W2[:, :4], "b": B1[:3]}
    tp = {k: tg.tensor(v) for k, v in p.items()}
    pp = {k: torch.tensor(v) for k, v in p.items()}
    for name in ("jacrev", "jacfwd"):
        replays.clear()
        ours = getattr(F, name)(make(tg), argnums=(0, 1))(tp, tg.tensor(X))
        theirs = getattr(torch.func, name)(make(torch), argnums=(0, 1))(pp, torch.tensor(X))
        assert all(r is True for r in replays) and replays, name
        for out in ("y", "s"):
            for k in ("w", "b"):
                np.testing.assert_allclose(
                    ours[out][0][k].numpy(), theirs[out][0][k].numpy(), rtol=1e-12, atol=1e-14
                )
            np.testing.assert_allclose(
                ours[out][1].numpy(), theirs[out][1].numpy(), rtol=1e-12, atol=1e-14
            )


def test_jacobians_of_a_closure_over_a_parameter_are_batched(replays):
    # a captured tensor that requires grad: a top-level Jacobian is detached, so vmap need
    # not keep a graph to it (it ran once per row for one: "a captured tensor is tracked
    # by a tape outside")
    torch = _torch()
    w = tg.tensor(W1, requires_grad=True)
    tw = torch.tensor(W1, requires_grad=True)
    for name in ("jacrev", "jacfwd"):
        replays.clear()
        J = getattr(F, name)(lambda x: tg.tanh(x @ w.T) * x.sum())(tg.tensor(X))
        assert replays == [True], name
        tJ = getattr(torch.func, name)(lambda x: torch.tanh(x @ tw.T) * x.sum())(torch.tensor(X))
        np.testing.assert_allclose(J.numpy(), tJ.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert w.grad is None


def test_jacobian_inside_a_tape_keeps_the_graph_to_the_primal():
    # a primal an outer tape tracks: the Jacobian stays differentiable (the per-sample
    # loop keeps the graph); the values of d sum(J**2)/dx against torch
    torch = _torch()
    f = _mlp(tg)
    x = tg.tensor(X, requires_grad=True)
    (F.jacrev(f)(x) ** 2).sum().backward()
    tx = torch.tensor(X, requires_grad=True)
    (torch.func.jacrev(_mlp(torch))(tx) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_jacrev_inside_grad_stays_differentiable():
    torch = _torch()
    f = _mlp(tg)
    g = F.grad(lambda x: (F.jacrev(f)(x) ** 2).sum())(tg.tensor(X))
    tf = _mlp(torch)
    tg_ = torch.func.grad(lambda x: (torch.func.jacrev(tf)(x) ** 2).sum())(torch.tensor(X))
    np.testing.assert_allclose(g.numpy(), tg_.numpy(), rtol=1e-10, atol=1e-12)


def test_custom_function_output_in_vmap_runs_per_sample():
    # a custom Function's output is made around the tracer: the replay would give every
    # sample sample 0's value, so vmap loops (the values prove it)
    class Square(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    xs = tg.tensor(RNG.standard_normal((3, 4)))
    got = F.vmap(F.grad(lambda x: Square.apply(x.sin()).sum()))(xs)
    want = 2 * np.sin(xs.numpy()) * np.cos(xs.numpy())
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_empty_inputs_and_outputs():
    J = F.jacrev(lambda x: x[:0] * 2)(tg.tensor(X))
    assert J.shape == (0, 4)
    J = F.jacfwd(lambda x: x.sum() * tg.ones(2, dtype=tg.float64))(tg.zeros(0, dtype=tg.float64))
    assert J.shape == (2, 0)


def test_jacfwd_random_op_names_jacfwd_and_the_fix():
    with pytest.raises(RuntimeError, match=r"jacfwd.*randomness='same'"):
        F.jacfwd(lambda x: x * tg.rand(4, dtype=tg.float64))(tg.tensor(X))
    got = F.jacfwd(lambda x: x * tg.rand(4, dtype=tg.float64), randomness="same")(tg.tensor(X))
    assert got.shape == (4, 4)


def test_jacfwd_keeps_grad_mode_and_an_inner_grad_of_a_captured_tensor(replays):
    # the top-level Jacobian asks its own vmap for no graph, not the function it maps: grad
    # mode stays on inside, and a grad inside (through a vmap of its own) sees its graph
    torch = _torch()
    w = tg.tensor(W1[:, 0], requires_grad=True)
    modes = []

    def f(x):
        modes.append(tg.is_grad_enabled())
        g = F.grad(lambda v: F.vmap(lambda r: (r * v * x.sum()).sin().sum())(tg.eye(6)).sum())
        return g(w) * x[0]

    J = F.jacfwd(f)(tg.tensor(X))
    assert modes and all(modes)
    tw = torch.tensor(W1[:, 0], requires_grad=True)

    def tf(x):
        g = torch.func.grad(
            lambda v: torch.func.vmap(lambda r: (r * v * x.sum()).sin().sum())(
                torch.eye(6, dtype=torch.float64)
            ).sum()
        )
        return g(tw) * x[0]

    tJ = torch.func.jacfwd(tf)(torch.tensor(X))
    np.testing.assert_allclose(J.numpy(), tJ.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_hessian_random_op_names_hessian():
    with pytest.raises(RuntimeError, match=r"hessian: .*random operation.*draw the random"):
        F.hessian(lambda x: (x * tg.rand(4, dtype=tg.float64)).sum() ** 2)(tg.tensor(X))
