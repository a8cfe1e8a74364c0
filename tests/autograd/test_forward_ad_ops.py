"""Forward mode, generated from the op table: for every differentiable op and sample input,
the tangent of a dual output must equal (float64) central finite differences, the reverse
mode Jacobian (<v, J t> == <J^T v, t>), and torch.func.jvp where PyTorch is installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import forward_ad as fwAD
from tapegrad.ops import OPS


def _samples(op):
    return op.samples(np.random.default_rng(0)) if op.samples else []


CASES = [
    pytest.param(name, i, id=f"{name}-{i}")
    for name, op in sorted(OPS.items())
    if op.differentiable
    for i in range(len(_samples(op)))
]


def _float_positions(args):
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]


def _prepare(name, index):
    op = OPS[name]
    args, params = _samples(op)[index]
    args = [
        a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
        for a in args
    ]
    pos = _float_positions(args)
    if not pos:
        pytest.skip("sample has no floating input")
    rng = np.random.default_rng(7)
    tangents = {i: rng.standard_normal(args[i].shape) for i in pos}
    return op, args, params, tangents


def _call(op, args, params):
    return op(*[tg.tensor(a) if isinstance(a, np.ndarray) else a for a in args], **params)


def _jvp(op, args, params, tangents):
    with fwAD.dual_level():
        inputs = [
            fwAD.make_dual(tg.tensor(a), tg.tensor(tangents[i]))
            if i in tangents
            else (tg.tensor(a) if isinstance(a, np.ndarray) else a)
            for i, a in enumerate(args)
        ]
        out = op(*inputs, **params)
        primal, tangent = fwAD.unpack_dual(out)
        return primal._data.copy(), (None if tangent is None else tangent._data.copy())


def _finite_difference(op, args, params, tangents, eps=1e-6):
    def at(sign):
        moved = [
            np.asarray(a + sign * eps * tangents[i]) if i in tangents else a
            for i, a in enumerate(args)
        ]
        return _call(op, moved, params)._data

    return (at(1) - at(-1)) / (2 * eps)


@pytest.mark.parametrize("name,index", CASES)
def test_jvp_matches_finite_differences(name, index):
    op, args, params, tangents = _prepare(name, index)
    out = _call(op, args, params)
    if out.dtype.kind != "f":
        pytest.skip("integer output")
    primal, tangent = _jvp(op, args, params, tangents)
    np.testing.assert_allclose(primal, out._data, rtol=1e-12, atol=1e-12)
    assert tangent is not None and tangent.shape == out.shape
    assert tangent.dtype == out.dtype
    fd = _finite_difference(op, args, params, tangents)
    np.testing.assert_allclose(tangent, fd, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,index", CASES)
def test_jvp_matches_reverse_mode(name, index):
    op, args, params, tangents = _prepare(name, index)
    leaves = {i: tg.tensor(args[i], requires_grad=True) for i in tangents}
    out = op(
        *[
            leaves.get(i, tg.tensor(a) if isinstance(a, np.ndarray) else a)
            for i, a in enumerate(args)
        ],
        **params,
    )
    if out.dtype.kind != "f":
        pytest.skip("integer output")
    _, tangent = _jvp(op, args, params, tangents)
    v = np.random.default_rng(3).standard_normal(out.shape)
    if not out.requires_grad:
        assert not np.any(tangent)
        return
    grads = tg.autograd.grad(out, list(leaves.values()), tg.tensor(v), allow_unused=True)
    vjt = sum(float(np.sum(g._data * tangents[i])) for g, i in zip(grads, leaves) if g is not None)
    np.testing.assert_allclose(float(np.sum(v * tangent)), vjt, rtol=1e-8, atol=1e-9)


TORCH_CASES = [c for c in CASES if OPS[c.values[0]].torch_ref is not None]


@pytest.mark.parametrize("name,index", TORCH_CASES)
def test_jvp_matches_torch_func(name, index):
    torch = pytest.importorskip("torch")
    op, args, params, tangents = _prepare(name, index)
    if _call(op, args, params).dtype.kind != "f":
        pytest.skip("integer output")
    _, tangent = _jvp(op, args, params, tangents)
    pos = sorted(tangents)

    def f(*xs):
        full = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
        for i, x in zip(pos, xs):
            full[i] = x
        return op.torch_ref(torch, *full, **params)

    primals = tuple(torch.from_numpy(args[i]) for i in pos)
    ts = tuple(torch.from_numpy(tangents[i]) for i in pos)
    try:
        with warnings.catch_warnings():  # torch.func imports torch.jit.script (deprecated)
            warnings.simplefilter("ignore", DeprecationWarning)
            _, ref = torch.func.jvp(f, primals, ts)
    except (RuntimeError, NotImplementedError) as e:  # PyTorch lacks a forward rule
        pytest.skip(f"torch.func.jvp: {e}"[:200])
    np.testing.assert_allclose(tangent, ref.detach().numpy(), rtol=1e-7, atol=1e-9)


def test_every_differentiable_op_has_a_forward_rule():
    """A written jvp rule, or a vjp rule to derive one from (every differentiable op)."""
    missing = [
        n for n, op in OPS.items() if op.differentiable and op.jvp_rule is None and op.rule is None
    ]
    assert not missing, f"ops without a forward-mode rule: {missing}"
