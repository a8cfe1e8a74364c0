"""Tests generated from the op table: every differentiable op, every sample input, checked by
finite differences (first and second order, float64) and against PyTorch when installed."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck
from tapegrad.ops import OPS


def _samples(op):
    return op.samples(np.random.default_rng(0)) if op.samples else []


CASES = [
    pytest.param(name, i, id=f"{name}-{i}")
    for name, op in sorted(OPS.items())
    if op.differentiable
    for i in range(len(_samples(op)))
]


def _make_inputs(args):
    """float arrays -> float64 leaves that require grad; everything else as is."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            out.append(tg.tensor(a.astype(np.float64), requires_grad=True))
        elif isinstance(a, np.ndarray):
            out.append(tg.tensor(a))
        else:
            out.append(a)
    return out


def _call(name, params):
    op = OPS[name]
    return lambda *args: op(*args, **params)


def test_every_differentiable_op_has_a_rule_and_samples():
    missing = [
        n for n, op in OPS.items() if op.differentiable and (op.rule is None or not op.samples)
    ]
    assert not missing, f"ops without a derivative rule or sample inputs: {missing}"


@pytest.mark.parametrize("name,index", CASES)
def test_gradcheck(name, index):
    args, params = _samples(OPS[name])[index]
    inputs = _make_inputs(args)
    if not any(isinstance(t, tg.Tensor) and t.requires_grad for t in inputs):
        pytest.skip("sample has no differentiable input")
    assert gradcheck(_call(name, params), tuple(inputs))


@pytest.mark.parametrize("name,index", CASES)
def test_gradgradcheck(name, index):
    args, params = _samples(OPS[name])[index]
    inputs = _make_inputs(args)
    if not any(isinstance(t, tg.Tensor) and t.requires_grad for t in inputs):
        pytest.skip("sample has no differentiable input")
    assert gradgradcheck(_call(name, params), tuple(inputs))


TORCH_CASES = [c for c in CASES if OPS[c.values[0]].torch_ref is not None]


def _np(t):
    return t.detach().numpy(force=True)  # force: PyTorch's ZeroTensor has no plain view


def _to_torch(torch, a):
    if isinstance(a, tg.Tensor):
        t = torch.from_numpy(np.array(a._data))
        return t.requires_grad_() if a.requires_grad else t
    return a


@pytest.mark.parametrize("name,index", TORCH_CASES)
def test_matches_torch(name, index):
    torch = pytest.importorskip("torch")
    op = OPS[name]
    args, params = _samples(op)[index]
    ours = _make_inputs(args)
    theirs = [_to_torch(torch, a) for a in ours]
    out = op(*ours, **params)
    ref = op.torch_ref(torch, *theirs, **params)
    np.testing.assert_allclose(out._data, _np(ref), rtol=1e-7, atol=1e-9)

    wrt = [i for i, a in enumerate(ours) if isinstance(a, tg.Tensor) and a.requires_grad]
    if not wrt or not ref.requires_grad:
        return
    v = np.random.default_rng(1).standard_normal(out.shape)
    g_ours = tg.autograd.grad(
        out, [ours[i] for i in wrt], tg.tensor(v), create_graph=True, allow_unused=True
    )
    g_ref = torch.autograd.grad(
        ref, [theirs[i] for i in wrt], torch.from_numpy(v), create_graph=True, allow_unused=True
    )
    for a, b in zip(g_ours, g_ref):
        if b is None:
            assert a is None or not np.any(a._data)
            continue
        np.testing.assert_allclose(a._data, _np(b), rtol=1e-7, atol=1e-9)

    # second order: d/dx of sum(grad * w) for a fixed random w
    pairs = [
        (a, b, i)
        for a, b, i in zip(g_ours, g_ref, wrt)
        if a is not None and b is not None and b.requires_grad
    ]
    if not pairs:
        return
    rng = np.random.default_rng(2)
    ws = [rng.standard_normal(a.shape) for a, _, _ in pairs]
    s_ours = sum((a * tg.tensor(w)).sum() for (a, _, _), w in zip(pairs, ws))
    s_ref = sum((b * torch.from_numpy(w)).sum() for (_, b, _), w in zip(pairs, ws))
    gg_ref = torch.autograd.grad(s_ref, [theirs[i] for i in wrt], allow_unused=True)
    if not s_ours.requires_grad:  # our first-order gradients are constants: so must theirs be
        for b in gg_ref:
            assert b is None or not np.any(_np(b)), "PyTorch has a second-order gradient"
        return
    gg_ours = tg.autograd.grad(s_ours, [ours[i] for i in wrt], allow_unused=True)
    for a, b in zip(gg_ours, gg_ref):
        if b is None:
            assert a is None or not np.any(a._data)
            continue
        assert a is not None, "second-order gradient missing where PyTorch has one"
        np.testing.assert_allclose(a._data, _np(b), rtol=1e-6, atol=1e-8)
