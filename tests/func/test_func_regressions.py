"""Minimal reproductions of the mismatches tests/func/test_fuzz_func_vs_torch.py found
between tg.func / forward AD and torch.func (each failed before its fix); analytic values,
no PyTorch needed."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import func as F
from tapegrad.compile import CompileWarning


def _t(x):
    return tg.tensor(np.asarray(x, dtype=np.float64))


def test_vmap_of_jvp_gives_the_first_sample_its_tangent():
    # the traced run (sample 0) went through tg.compile's tracer, which recorded the ops on
    # dual tensors without their tangents: sample 0's tangent came out zero
    x = np.array([[0.5, -1.0], [2.0, 0.3], [1.5, -0.7]])
    t = np.array([[1.0, 2.0], [-1.0, 0.5], [0.25, 3.0]])
    _, tangent = F.vmap(lambda a, u: F.jvp(tg.sin, (a,), (u,)))(_t(x), _t(t))
    np.testing.assert_allclose(tangent.numpy(), np.cos(x) * t, rtol=1e-12)
    jac = F.vmap(F.jacfwd(lambda a: a**3))(_t(x))
    np.testing.assert_allclose(jac.numpy(), np.stack([np.diag(3 * r**2) for r in x]), rtol=1e-12)
    hess = F.vmap(F.hessian(lambda a: (a**3).sum()))(_t(x))
    np.testing.assert_allclose(hess.numpy(), np.stack([np.diag(6 * r) for r in x]), rtol=1e-12)


def test_compiled_function_taking_a_jvp_gets_its_tangent_on_the_first_call():
    # the same root: tg.compile's traced first call returned a zero tangent
    f = tg.compile(lambda x: F.jvp(tg.sin, (x,), (tg.ones_like(x),))[1] * 1.0)
    x = _t([0.3, 1.0])
    with pytest.warns(CompileWarning, match="dual tensor of forward AD"):
        first = f(x)
    np.testing.assert_allclose(first.numpy(), np.cos([0.3, 1.0]), rtol=1e-12)


def test_grad_and_value_returns_the_gradient_first_as_torch_func():
    # it was an alias of value_and_grad (JAX's order: value first)
    g, value = F.grad_and_value(lambda x: (x**3).sum())(_t([1.0, 2.0]))
    assert g.tolist() == [3.0, 12.0] and value.item() == 9.0
    g, (value, aux) = F.grad_and_value(lambda x: ((x**2).sum(), x * 2), has_aux=True)(_t([3.0]))
    assert g.tolist() == [6.0] and value.item() == 9.0 and aux.tolist() == [6.0]
    value, g = F.value_and_grad(lambda x: x**2)(_t(3.0))  # JAX's order stays
    assert value.item() == 9.0 and g.item() == 6.0


@pytest.mark.parametrize("batched_path", [True, False], ids=["batched", "per-sample"])
def test_vmap_refuses_out_dims_none_for_an_output_that_varies(batched_path):
    # vmap returned sample 0's value for it, silently (torch.func raises)
    x = _t([[1.0, 2.0], [3.0, 4.0]])

    def f(a):
        if not batched_path:
            float(a.sum())  # a value read: vmap runs per sample
        return a * 2, tg.ones(2)

    with pytest.raises(ValueError, match=r"vmap\(f, .*output 0 depends on the mapped inputs"):
        F.vmap(f, out_dims=(None, 0))(x)
    out, ones = F.vmap(f, out_dims=(0, None))(x)  # the unmapped output is fine
    assert out.tolist() == [[2.0, 4.0], [6.0, 8.0]] and ones.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: F.vmap(lambda a: a, in_dims=(0.5,))(x), r"vmap\(<lambda>.*in_dim=0.5"),
        (lambda x: F.vmap(lambda a: a, out_dims=3)(x), r"vmap\(<lambda>, \.\.\., out_dims=3\)"),
        (lambda x: F.vmap(lambda a: a, chunk_size=0)(x), r"vmap\(<lambda>.*chunk_size"),
        (lambda x: F.grad(lambda a: a.sum(), argnums=0.5)(x), r"grad: argnums must be an int"),
        (lambda x: F.jacrev(lambda a: 2.0)(x), r"jacrev\(f, \*primals\)"),
        (lambda x: F.jacfwd(lambda a: 2.0)(x), r"jacfwd\(f, primals, tangents\)"),
        (lambda x: F.hessian(lambda a: 2.0)(x), r"hessian\(f, \*primals\)"),
        (lambda x: F.jacrev(lambda a: a)(tg.tensor([1, 2])), r"jacrev: argument 0 has dtype"),
        (lambda x: F.jacrev(lambda a: a, chunk_size=0)(x), r"jacrev: chunk_size"),
    ],
)
def test_misuse_names_the_transform(call, message):
    # these raised a bare TypeError/IndexError (tuple indices, 'float' not iterable, dimension
    # out of range), named the inner vjp/jvp, or accepted chunk_size=0
    with pytest.raises((TypeError, ValueError, IndexError, RuntimeError), match=message):
        call(_t([[1.0, 2.0], [3.0, 4.0]]))


def test_primals_may_be_dicts_and_tuples_of_tensors():
    # vjp, jvp, jacrev, jacfwd and hessian refused them ("cannot make a tensor from dict")
    p = {"w": _t([1.0, 2.0]), "b": (_t(0.5),)}
    x = _t([3.0, -1.0])

    def f(q):
        return q["w"] * x + q["b"][0]

    (g,) = F.vjp(f, p)[1](_t([1.0, 1.0]))
    assert g["w"].tolist() == [3.0, -1.0] and g["b"][0].item() == 2.0
    _, t = F.jvp(f, (p,), ({"w": _t([1.0, 0.0]), "b": (_t(1.0),)},))
    assert t.tolist() == [4.0, 1.0]
    for jac in (F.jacrev(f)(p), F.jacfwd(f)(p)):
        np.testing.assert_array_equal(jac["w"].numpy(), np.diag([3.0, -1.0]))
        np.testing.assert_array_equal(jac["b"][0].numpy(), [1.0, 1.0])
    h = F.hessian(lambda q: (q["w"] ** 3).sum() * q["b"][0])(p)
    np.testing.assert_array_equal(h["w"]["w"].numpy(), np.diag([3.0, 6.0]))  # 6 w b
    np.testing.assert_array_equal(h["w"]["b"][0].numpy(), [3.0, 12.0])  # 3 w^2


def _per_sample(f, *args):
    return np.stack([f(*[a[k] for a in args]).numpy() for k in range(args[0].shape[0])])


_INDEX_SOURCES = {
    # an index tensor's array inside the indexing key: the batched replay used sample 0's
    "x[i]": (lambda a, i, j, m: a[i] * 2),
    "index_select": (lambda a, i, j, m: tg.index_select(a, 0, i)),
    "index_add": (lambda a, i, j, m: tg.zeros(5, 3, dtype=a.dtype).index_add(0, i, a[:2])),
    # indices computed from a sample's values outside the op table
    "x[0-d int]": (lambda a, i, j, m: a[j]),
    "sort": (lambda a, i, j, m: tg.sort(a, dim=0).values),
    "argsort": (lambda a, i, j, m: tg.argsort(a, dim=0)),
    "topk": (lambda a, i, j, m: tg.topk(a.flatten(), 3).values),
    "kthvalue": (lambda a, i, j, m: tg.kthvalue(a, 2, 0).values),
    "x[mask].sum()": (lambda a, i, j, m: a[m].sum()),
    "masked_select": (lambda a, i, j, m: tg.masked_select(a, m).sum()),
    "nonzero": (lambda a, i, j, m: tg.nonzero(m[0]).sum() * a),
    "allclose": (lambda a, i, j, m: a * 2 if tg.allclose(a[0], a[1]) else a),
}


@pytest.mark.parametrize("name", list(_INDEX_SOURCES))
def test_vmap_with_per_sample_indices_matches_the_loop(name):
    rng = np.random.default_rng(0)
    x = _t(rng.standard_normal((4, 5, 3)))
    i = tg.tensor(rng.integers(0, 5, (4, 2)))
    j = tg.tensor(rng.integers(0, 5, (4,)))
    m = tg.tensor(rng.random((4, 5, 3)) > 0.5)
    data = x.numpy().copy()
    data[2, 1] = data[2, 0]  # allclose(rows 0, 1) holds for sample 2 only
    x = _t(data)
    f = _INDEX_SOURCES[name]
    got = F.vmap(f)(x, i, j, m)
    np.testing.assert_array_equal(got.numpy(), _per_sample(f, x, i, j, m))


def test_jvp_of_a_vmap_that_captures_the_dual_tensor():
    # the per-sample fallback detached sample 0's result (the traced run's), dropping the
    # tangent it got from the captured dual tensor: jacfwd(lambda x: vmap(g(x, .))(Y))
    x0 = np.array([0.3, -1.2, 0.7])
    ys = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    jac = F.jacfwd(lambda x: F.vmap(lambda y: (x * y).sin())(_t(ys)))(_t(x0))
    expected = np.stack([np.diag(np.cos(x0 * y) * y) for y in ys])
    np.testing.assert_allclose(jac.numpy(), expected, rtol=1e-12)


def test_top_level_results_and_aux_are_plain_tensors():
    # aux (grad, vjp, jacrev, jacfwd), jvp's outputs over a grad, and vmap over a grad of a
    # captured tensor came back requiring grad, carrying the transform's graph
    x, y = _t([1.0, 2.0]), _t([0.5, -1.0])
    _, aux = F.grad(lambda a: ((a**2).sum(), a * 3), has_aux=True)(x)
    assert not aux.requires_grad
    assert not F.vjp(lambda a: (a * 2, a.exp()), x, has_aux=True)[2].requires_grad
    assert not F.jacrev(lambda a: (a * 2, a.exp()), has_aux=True)(x)[1].requires_grad
    assert not F.jacfwd(lambda a: (a * 2, a.exp()), has_aux=True)(x)[1].requires_grad
    out, t = F.jvp(F.grad(lambda a: (a**3).sum()), (x,), (y,))
    assert not out.requires_grad and not t.requires_grad
    np.testing.assert_allclose(t.numpy(), 6 * x.numpy() * y.numpy())
    g = F.vmap(lambda row: F.grad(lambda w: (w * row).sin().sum())(y))(_t([[1.0, 2.0], [3.0, 4.0]]))
    assert not g.requires_grad
    from tapegrad.func import batched_replay

    assert batched_replay.fallback_reason() is None  # it was taken for a captured tracked tensor
