"""tg.autograd.functional (vjp jvp jacobian hessian hvp vhp) and tg.func (grad, value_and_grad)."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import functional as F


def _t(values, requires_grad=False):
    return tg.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def cubic(x):
    return x * x * x


def scalar_fn(a, b):
    return (a * a * b + b * b * b * 2).sum()


A0 = np.array([0.5, -1.0, 2.0])
B0 = np.array([1.5, 0.25, -0.5])


def test_vjp_matches_analytic():
    x = _t([1.0, 2.0, -1.0])
    v = _t([1.0, 0.5, 2.0])
    out, g = F.vjp(cubic, x, v)
    np.testing.assert_allclose(out.numpy(), [1.0, 8.0, -1.0])
    np.testing.assert_allclose(g.numpy(), 3 * np.array([1.0, 4.0, 1.0]) * [1.0, 0.5, 2.0])
    assert not out.requires_grad and not g.requires_grad
    assert x.grad is None


def test_vjp_scalar_output_needs_no_v_and_tuple_inputs():
    a, b = _t(A0), _t(B0)
    out, (ga, gb) = F.vjp(scalar_fn, (a, b))
    np.testing.assert_allclose(out.item(), np.sum(A0 * A0 * B0 + 2 * B0**3))
    np.testing.assert_allclose(ga.numpy(), 2 * A0 * B0)
    np.testing.assert_allclose(gb.numpy(), A0 * A0 + 6 * B0 * B0)


def test_vjp_errors():
    x = _t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="v can be omitted only"):
        F.vjp(cubic, x)
    with pytest.raises(RuntimeError, match=r"v\[0\] has shape \(3,\)"):
        F.vjp(cubic, x, _t([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="inputs must be a Tensor"):
        F.vjp(cubic, 3.0)


def test_strict_flags_independent_inputs():
    a, b = _t([1.0]), _t([2.0])
    out, (ga, gb) = F.vjp(lambda a, b: a * 2, (a, b), _t([1.0]))
    assert gb.tolist() == [0.0]
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.vjp(lambda a, b: a * 2, (a, b), _t([1.0]), strict=True)


def test_jvp_by_double_vjp():
    x = _t([1.0, 2.0, -1.0])
    v = _t([1.0, 0.5, 2.0])
    out, jv = F.jvp(cubic, x, v)
    np.testing.assert_allclose(jv.numpy(), 3 * np.array([1.0, 4.0, 1.0]) * [1.0, 0.5, 2.0])
    a, b = _t(A0), _t(B0)
    out, jv = F.jvp(lambda a, b: a * b, (a, b), (_t([1.0, 1.0, 1.0]), _t([0.0, 0.0, 1.0])))
    np.testing.assert_allclose(jv.numpy(), B0 + A0 * [0.0, 0.0, 1.0])


def test_jacobian_shapes_and_values():
    x = _t([1.0, 2.0])
    j = F.jacobian(cubic, x)
    np.testing.assert_allclose(j.numpy(), np.diag([3.0, 12.0]))
    a, b = _t(A0), _t(B0)
    ja, jb = F.jacobian(lambda a, b: a * b, (a, b))
    np.testing.assert_allclose(ja.numpy(), np.diag(B0))
    np.testing.assert_allclose(jb.numpy(), np.diag(A0))
    (j1a, j1b), (j2a, j2b) = F.jacobian(lambda a, b: (a * b, a * 2), (a, b))
    np.testing.assert_allclose(j2a.numpy(), 2 * np.eye(3))
    assert j2b.shape == (3, 3) and not j2b.numpy().any()
    m = _t(np.arange(6.0).reshape(2, 3))
    assert F.jacobian(lambda t: t * 2, m).shape == (2, 3, 2, 3)


def test_jacobian_create_graph_is_differentiable():
    x = _t([1.0, 2.0], requires_grad=True)
    j = F.jacobian(cubic, x, create_graph=True)  # diag(3 x^2)
    assert j.requires_grad
    (g,) = tg.autograd.grad(j, x, tg.ones(2, 2, dtype="float64"))
    np.testing.assert_allclose(g.numpy(), [6.0, 12.0])


def test_hessian_hvp_vhp_match_analytic():
    a, b = _t(A0), _t(B0)
    (haa, hab), (hba, hbb) = F.hessian(scalar_fn, (a, b))
    np.testing.assert_allclose(haa.numpy(), np.diag(2 * B0))
    np.testing.assert_allclose(hab.numpy(), np.diag(2 * A0))
    np.testing.assert_allclose(hba.numpy(), np.diag(2 * A0))
    np.testing.assert_allclose(hbb.numpy(), np.diag(12 * B0))
    va, vb = _t([1.0, 0.0, 2.0]), _t([0.5, 1.0, 0.0])
    h = np.block([[haa.numpy(), hab.numpy()], [hba.numpy(), hbb.numpy()]])
    v = np.concatenate([va.numpy(), vb.numpy()])
    for fn in (F.hvp, F.vhp):
        out, (ra, rb) = fn(scalar_fn, (a, b), (va, vb))
        np.testing.assert_allclose(np.concatenate([ra.numpy(), rb.numpy()]), h @ v)
        assert out.item() == pytest.approx(np.sum(A0 * A0 * B0 + 2 * B0**3))


def test_hessian_single_input():
    x = _t([1.0, 2.0])
    h = F.hessian(lambda x: (x * x * x).sum(), x)
    np.testing.assert_allclose(h.numpy(), np.diag([6.0, 12.0]))


def test_against_torch_functional():
    torch = pytest.importorskip("torch")
    TF = torch.autograd.functional
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(4)
    v0 = rng.standard_normal(4)

    def ours(x):
        return (x * x * x * 0.5 + x * 2).sum()

    def theirs(x):
        return (x * x * x * 0.5 + x * 2).sum()

    def vec(x):
        return x * x * 3 - x

    x, v = _t(x0), _t(v0)
    tx, tv = torch.tensor(x0), torch.tensor(v0)
    np.testing.assert_allclose(F.hessian(ours, x).numpy(), TF.hessian(theirs, tx).numpy())
    np.testing.assert_allclose(F.hvp(ours, x, v)[1].numpy(), TF.hvp(theirs, tx, tv)[1].numpy())
    np.testing.assert_allclose(F.vhp(ours, x, v)[1].numpy(), TF.vhp(theirs, tx, tv)[1].numpy())
    np.testing.assert_allclose(F.jacobian(vec, x).numpy(), TF.jacobian(vec, tx).numpy())
    np.testing.assert_allclose(F.jvp(vec, x, v)[1].numpy(), TF.jvp(vec, tx, tv)[1].numpy())
    np.testing.assert_allclose(F.vjp(vec, x, v)[1].numpy(), TF.vjp(vec, tx, tv)[1].numpy())


def test_functional_works_under_no_grad():
    x = _t([1.0, 2.0])
    with tg.no_grad():
        j = F.jacobian(cubic, x)
        assert not tg.is_grad_enabled()
    np.testing.assert_allclose(j.numpy(), np.diag([3.0, 12.0]))


# ------------------------------------------------------------------ tg.func
def test_func_grad_and_value_and_grad():
    df = tg.func.grad(lambda x: (x * x * x).sum())
    x = _t([1.0, 2.0])
    np.testing.assert_allclose(df(x).numpy(), [3.0, 12.0])
    assert x.grad is None and not x.requires_grad
    value, g = tg.func.value_and_grad(lambda x: x * x)(tg.tensor(3.0))
    assert value.item() == 9.0 and g.item() == 6.0
    assert not value.requires_grad


def test_func_grad_argnums_and_python_numbers():
    f = lambda x, y: x * x * y  # noqa: E731
    gx, gy = tg.func.grad(f, argnums=(0, 1))(tg.tensor(2.0), 3.0)
    assert gx.item() == 12.0 and gy.item() == 4.0
    assert tg.func.grad(f, argnums=1)(tg.tensor(2.0), tg.tensor(3.0)).item() == 4.0
    assert tg.func.grad(f, argnums=-1)(tg.tensor(2.0), tg.tensor(3.0)).item() == 4.0


def test_func_grad_has_aux():
    def f(x):
        y = x * x
        return y, {"y": y.detach()}

    g, aux = tg.func.grad(f, has_aux=True)(tg.tensor(3.0))
    assert g.item() == 6.0 and aux["y"].item() == 9.0
    (value, aux), g = tg.func.value_and_grad(f, has_aux=True)(tg.tensor(3.0))
    assert value.item() == 9.0 and g.item() == 6.0


def test_func_grad_nests_for_higher_derivatives():
    f = lambda x: x**4  # noqa: E731
    x = tg.tensor(1.5)
    d3 = tg.func.grad(tg.func.grad(tg.func.grad(f)))(x)
    assert d3.item() == pytest.approx(24 * 1.5)


def test_func_grad_nested_with_closure_is_not_confused():
    # d/dx [ x * d/dy (x * y) ] = d/dx [ x * x ] = 2x
    def outer(x):
        inner = tg.func.grad(lambda y: x * y)
        return x * inner(tg.tensor(1.0))

    assert tg.func.grad(outer)(tg.tensor(3.0)).item() == pytest.approx(6.0)


def test_func_grad_errors():
    with pytest.raises(RuntimeError, match="one-element tensor"):
        tg.func.grad(lambda x: x * 2)(tg.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="floating point"):
        tg.func.grad(lambda x: x * 2)(tg.tensor(2))
    with pytest.raises(ValueError, match="argnums=3"):
        tg.func.grad(lambda x: x, argnums=3)(tg.tensor(1.0))
    with pytest.raises(TypeError, match="pair"):
        tg.func.grad(lambda x: x * 2, has_aux=True)(tg.tensor(1.0))


def test_func_grad_of_constant_function_is_zero():
    g = tg.func.grad(lambda x: tg.tensor(5.0))(tg.tensor(2.0))
    assert g.item() == 0.0


def test_create_graph_results_differentiate_to_the_original_input():
    x = _t([1.0, 2.0], requires_grad=True)
    v = _t([1.0, 1.0])
    f = lambda x: (x**4).sum()  # noqa: E731  Hessian diag(12 x^2)
    for fn in (F.hvp, F.vhp):
        _, h = fn(f, x, v, create_graph=True)
        np.testing.assert_allclose(h.detach().numpy(), [12.0, 48.0])
        (g,) = tg.autograd.grad(h.sum(), x)
        np.testing.assert_allclose(g.numpy(), [24.0, 48.0])
    (g,) = tg.autograd.grad(F.hessian(f, x, create_graph=True).sum(), x)
    np.testing.assert_allclose(g.numpy(), [24.0, 48.0])
    _, j = F.jvp(lambda x: x**3, x, v, create_graph=True)
    (g,) = tg.autograd.grad(j.sum(), x)
    np.testing.assert_allclose(g.numpy(), [6.0, 12.0])
