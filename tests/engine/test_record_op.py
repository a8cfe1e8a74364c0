"""record_op (the dispatcher's one call per recorded op) makes the node record_node makes:
edges, output indices, per-input records, tapes."""

import numpy as np

import tapegrad as tg
from tapegrad.engine.recorder import record_node, record_op
from tapegrad.engine.state import AMBIENT
from tapegrad.tensor import Tensor

_FIELDS = ("op", "params", "next", "next_nr", "in_meta", "tapes", "xp", "n_out", "extra")


def _same_node(inputs, out):
    a = record_op("op", {}, inputs, AMBIENT, np, Tensor, out)
    b = record_node("op", {}, inputs, AMBIENT, np, Tensor, 1, out)
    for field in _FIELDS:
        assert getattr(a, field) == getattr(b, field), (field, inputs)
    return a


def test_record_op_matches_record_node():
    leaf = tg.ones(3, requires_grad=True)
    made = leaf * 2.0
    untracked = tg.ones(3)
    wide = tg.ones(2, 3, requires_grad=True)
    first, second = made * 1.0, made * 3.0
    second._out_nr = 1  # as output 1 of a custom Function's node
    other_dtype = tg.ones(3, dtype=tg.float64, requires_grad=True)
    out = np.ones(3, np.float32)
    cases = [
        (leaf,),
        (made,),
        (second,),
        (other_dtype,),
        (made, 2.0),
        (3, leaf),
        (made, untracked),
        (untracked, made),
        (made, wide),
        (first, second),
        (made, np.float32(2.0)),
        (made, other_dtype),
    ]
    for inputs in cases:
        _same_node(inputs, out)


def test_record_op_keeps_records_where_shapes_differ():
    x = tg.ones(2, 3, requires_grad=True)
    node = _same_node((x, tg.ones(3)), np.ones((2, 3), np.float32))
    assert node.in_meta is None
    node = _same_node((tg.ones(3, requires_grad=True), x), np.ones((2, 3), np.float32))
    assert node.in_meta == (((3,), np.dtype(np.float32)), ((2, 3), np.dtype(np.float32)))
    second = tg.ones(3, requires_grad=True) * 1.0
    second._out_nr = 1
    assert _same_node((second, 1.0), np.ones(3, np.float32)).next_nr == (1, 0)
    assert _same_node((second,), np.ones(3, np.float32)).next_nr == (1,)


def test_saves_only_for_plans_keep_what_save_keeps():
    from tapegrad.ops import arith
    from tapegrad.ops.registry import _save

    tracked = tg.ones(3, requires_grad=True) * 1.5
    plain = tg.ones(3) * 2.0
    for op in (arith._mul, arith._div, arith._pow):
        for a, b in [(tracked, plain), (plain, tracked), (tracked, tracked * 1.0), (tracked, 2.0)]:
            r = op(a, b)
            node = r.grad_fn
            saved, checks = _save(op.save_idx, (a, b), r, op.save_for, node.next)
            assert node.saved == saved, (op, a, b)
            assert [(c[0] is d[0], c[1:]) for c, d in zip(node.checks, checks)] == [
                (True, d[1:]) for d in checks
            ]
            assert len(node.checks) == len(checks)


def test_ufunc_entries_keep_gradient_shapes_and_dtypes():
    """The fast entries tell record_op that a ufunc on one array (or on one and a Python
    float) has that array's shape and dtype; gradients still come back in each input's."""
    for dt in (tg.float16, tg.float32, tg.float64):
        x = tg.ones(2, 3, dtype=dt, requires_grad=True)
        row = tg.ones(3, dtype=tg.float64, requires_grad=True)
        ((x * 2.5 + 1.0).sin().exp() * row - 0.5).sum().backward()
        assert x.grad.dtype == dt and x.grad.shape == (2, 3)
        assert row.grad.dtype == tg.float64 and row.grad.shape == (3,)
        want = (2.5 * np.cos(3.5) * np.exp(np.sin(3.5))).astype(np.float64)
        np.testing.assert_allclose(x.grad.numpy().astype(np.float64), want, rtol=2e-3)
