"""dispatch_unary / dispatch_binary (the Tensor operators' and the elementwise functions'
fast entry) give what the generic dispatcher gives: values, dtype, class, tracking, errors."""

import itertools

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.compat import mxnet as mx
from tapegrad.ops import arith, unary
from tapegrad.ops.registry import dispatch, dispatch_binary, dispatch_unary


def _inputs():
    out = []
    for dt in (np.float32, np.float64, np.int64, np.uint8, np.bool_):
        for shape in ((), (3,), (2, 3)):
            a = (np.arange(int(np.prod(shape))).reshape(shape) % 5).astype(dt)
            out.append(tg.tensor(a))
            if dt in (np.float32, np.float64):
                out.append(tg.tensor(a, requires_grad=True))
    out += [tg.nn.Parameter(tg.ones(3)), mx.nd.ones(3)]
    return out + [2, 2.5, True, 300, -1, 0.0]


def _outcome(call, *args):
    try:
        r = call(*args)
    except Exception as e:  # noqa: BLE001  the error is part of what is compared
        return ("error", type(e), str(e))
    # repr: NaN compares equal to NaN
    values = repr(r.detach().numpy().tolist())
    return (values, r.dtype, type(r), r.requires_grad, r.grad_fn is not None)


@pytest.mark.parametrize("op", [arith._add, arith._sub, arith._mul, arith._div, arith._pow])
def test_binary_fast_path_matches_dispatch(op):
    values = _inputs()
    for a, b in itertools.product(values, values):
        if isinstance(a, tg.Tensor) or isinstance(b, tg.Tensor):
            assert _outcome(dispatch_binary, op, a, b) == _outcome(dispatch, op, a, b), (a, b)


@pytest.mark.parametrize(
    "op", [unary._exp, unary._sin, unary._cos, unary._tanh, unary._sqrt, unary._log]
)
def test_unary_fast_path_matches_dispatch(op):
    for a in _inputs():
        if isinstance(a, tg.Tensor):
            assert _outcome(dispatch_unary, op, a) == _outcome(dispatch, op, a), a


def test_fast_path_gradients_match():
    x = tg.tensor([0.5, 1.5], dtype=tg.float64, requires_grad=True)
    ((x * 3.0 + 1.0).tanh() - x.sin() / 2.0).sum().backward()
    xs = x.detach().numpy()
    want = 3.0 * (1.0 - np.tanh(3.0 * xs + 1.0) ** 2) - np.cos(xs) / 2.0
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_ufunc_is_the_forward_on_floats():
    """`defop(ufunc=...)`: the fast entries call the ufunc on floating arrays; it must give
    what the forward gives there, bit for bit (NaN, inf, signed zeros, float32 kept)."""
    from tapegrad.ops.quiet import call_quietly
    from tapegrad.ops.registry import OPS

    ops = [op for op in OPS.values() if op.ufunc is not None]
    assert {"add", "sub", "mul", "div", "exp", "sin", "tanh"} <= {op.name for op in ops}
    values = [-np.inf, -2.5, -0.0, 0.0, 0.5, 3.0, 1e30, np.inf, np.nan]
    for dt in (np.float32, np.float64):
        x = np.array(values, dtype=dt)
        y = np.array(values[::-1], dtype=dt)
        for op in ops:
            calls = [(x,)] if op.ufunc.nin == 1 else [(x, y), (x, 2.5), (-1.5, y), (x, y[:1])]
            for args in calls:
                want = call_quietly(op.forward, np, *args)
                got = call_quietly(op.ufunc, *args)
                assert got.dtype == want.dtype, (op, args)
                assert got.tobytes() == want.tobytes(), (op, args)
