"""The inlining pass's checks (compile/inline.py): matmul's templates are checked on small
arrays of the traced ranks, dtypes and layouts, once per process per pattern; a wrong
template is still caught there (its line keeps the op's call), and the replay still equals
eager bit for bit."""

from __future__ import annotations

import re

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tapegrad as tg
from tapegrad.compile import inline


@pytest.fixture
def fresh_verdicts(monkeypatch):
    """An empty memo of checks for this test (and the process's own back after it)."""
    verdicts: dict = {}
    monkeypatch.setattr(inline, "_verdicts", verdicts)
    return verdicts


def _layer(x, w, b):
    return ((x @ w + b).relu() @ w.T).sum()


def _compare(fn, arrays):
    """fn compiled and eager over three calls (trace, check, replay): values and gradients
    bit for bit. Returns the compiled program."""
    fast = tg.compile(fn)
    for _ in range(3):
        ins = [tg.tensor(a.copy(), requires_grad=True) for a in arrays]
        twins = [tg.tensor(a.copy(), requires_grad=True) for a in arrays]
        got, want = fast(*ins), fn(*twins)
        assert_array_equal(got.detach().numpy(), want.detach().numpy())
        got.backward()
        want.backward()
        for a, b in zip(ins, twins, strict=True):
            assert_array_equal(a.grad.numpy(), b.grad.numpy())
    (program,) = fast._cache.values()
    return program


def _arrays(rng, batch=160, n_in=80, n_out=128, dtype=np.float32):
    # (batch, n_out) float32 from 64 KiB: the forward GEMM goes into an aligned array
    return [
        rng.standard_normal((batch, n_in)).astype(dtype),
        (rng.standard_normal((n_in, n_out)) / n_in**0.5).astype(dtype),
        rng.standard_normal(n_out).astype(dtype),
    ]


def test_matmul_is_inlined_and_checked_on_small_arrays(rng, fresh_verdicts, monkeypatch):
    seen = []
    rule = inline._gradients_same

    def spy(instr, templates, arrays, out, ns, params):
        seen.append([a.shape for a in arrays])
        return rule(instr, templates, arrays, out, ns, params)

    monkeypatch.setattr(inline, "_gradients_same", spy)
    program = _compare(_layer, _arrays(rng))
    assert re.search(r"= U\d+\(v0, v1, out=U", program.forward_source)  # an aligned GEMM
    assert program.backward_source.count(".T") == 4  # both matmuls' rules inlined
    matmuls = [shapes for shapes in seen if len(shapes) == 2 and len(shapes[0]) == 2]
    assert matmuls and all(max(max(s) for s in shapes) < 10 for shapes in matmuls)
    assert fresh_verdicts  # memoized


def _wrong_matmul(a, b, out=None):
    """np.matmul with its first element one ulp off: wrong at every size."""
    r = np.matmul(a, b, out=out)
    r.flat[0] = np.nextafter(r.flat[0], np.inf)
    return r


def test_a_wrong_matmul_template_is_caught_on_the_small_arrays(rng, fresh_verdicts, monkeypatch):
    # every matmul template (forward, aligned forward, both gradients) calls {MATMUL}
    monkeypatch.setitem(inline._FUNCS, "MATMUL", _wrong_matmul)
    program = _compare(_layer, _arrays(rng))
    # matmul's forward keeps the op's call: neither `U(v0, v1)` nor the aligned GEMM result
    assert not re.search(r"= U\d+\(v\d+, v\d+[,)]", program.forward_source)
    assert ".T" not in program.backward_source  # matmul's rules called, not inlined
    assert fresh_verdicts and not any(fresh_verdicts.values())


def test_a_wrong_matmul_gradient_template_is_caught(rng, fresh_verdicts, monkeypatch):
    # one ulp off in one element of the first input's gradient, at any size
    wrong = "{MATMUL}({g}, {1}.T) * 1.0000001"
    monkeypatch.setitem(inline._GRADIENTS, "matmul", (2, (wrong, "{MATMUL}({0}.T, {g})")))
    program = _compare(_layer, _arrays(rng))
    assert "1.0000001" not in program.backward_source
    assert ".T" not in program.backward_source  # matmul's rules called, not inlined


def test_the_memo_is_per_dtype_and_layout_not_per_size(rng, fresh_verdicts):
    _compare(_layer, _arrays(rng))
    first = set(fresh_verdicts)
    _compare(_layer, _arrays(rng, batch=192, n_in=72, n_out=136))  # other sizes, same pattern
    assert set(fresh_verdicts) == first
    _compare(_layer, _arrays(rng, dtype=np.float64))  # another dtype: checked again
    after_f64 = set(fresh_verdicts)
    assert after_f64 > first
    x, w, b = _arrays(rng)
    # x in Fortran order: a matmul operand of another layout, checked again
    fortran = tg.compile(_layer)
    twins = [tg.tensor(a.copy(), requires_grad=True) for a in (x, w, b)]
    for _ in range(3):
        ins = [
            tg.from_numpy(np.asfortranarray(x)),
            *(tg.tensor(a, requires_grad=True) for a in (w, b)),
        ]
        got = fortran(*ins)
        want = _layer(tg.from_numpy(np.asfortranarray(x)), *twins[1:])
        assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert set(fresh_verdicts) > after_f64


def test_a_strided_operand_is_checked_at_full_size(rng, fresh_verdicts):
    x, w, b = _arrays(rng)
    x = np.repeat(x, 2, axis=1)  # (160, 160): x[:, ::2] is (160, 80)

    def fn(x, w, b):
        return _layer(x[:, ::2], w, b)  # a view neither C- nor F-contiguous

    program = _compare(fn, [x, w, b])
    assert program.backward_source.count(".T") == 4  # inlined, checked on the arrays


def test_shrunk_arrays_keep_ranks_dtypes_layouts_and_equal_sizes(rng):
    a = rng.standard_normal((256, 784)).astype(np.float32)
    b = np.asfortranarray(rng.standard_normal((784, 30)))
    out = np.empty((256, 30), np.float32)
    probes, like, pattern = inline._shrunk([a, b], out)
    (pa, pb) = probes
    assert pa.dtype == np.float32 and pb.dtype == np.float64
    assert pa.shape[1] == pb.shape[0] and like.shape == (pa.shape[0], pb.shape[1])
    assert len({*pa.shape, pb.shape[1]}) == 3 and max((*pa.shape, pb.shape[1])) < 10
    assert pa.flags.c_contiguous and pb.flags.f_contiguous and not pb.flags.c_contiguous
    ones = inline._shrunk([a[:1].copy()], out)  # a size 1 stays 1
    assert ones is not None and ones[0][0].shape[0] == 1
    assert inline._shrunk([a[:, ::2]], out) is None  # no small twin of a strided view
    assert inline._shrunk([a.astype(np.int64)], out) is None
    # the same pattern for other sizes of the same relations
    again = inline._shrunk([a[:128, :500].copy(), np.asfortranarray(b[:500, :20])], out[:128, :20])
    assert again is not None and again[2] == pattern
