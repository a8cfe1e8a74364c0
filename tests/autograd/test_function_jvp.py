"""Forward mode through custom `tg.autograd.Function`s: `jvp(ctx, *tangents)` with
`ctx.save_for_forward`, in both the ctx-forward and the `setup_context` styles, through
`forward_ad`, `tg.func.jvp`, `jacfwd` and `hessian`; checked in float64 against finite
differences and against the same Functions in PyTorch; the errors as PyTorch's, naming the
Function."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.autograd.forward_ad as fwAD


@pytest.fixture(autouse=True)
def _quiet_torch():
    with warnings.catch_warnings():  # torch's forward AD imports torch.jit.script (deprecated)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _t(a, **kw):
    return tg.tensor(np.asarray(a, dtype=np.float64), **kw)


def _make_scaled_product(lib):
    """out0 = k * x * sin(y), out1 = x + y, in the ctx-forward style (lib: tg or torch)."""

    class ScaledProduct(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.save_for_backward(x, y)
            ctx.k = k
            return k * x * y.sin(), x + y

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            assert tk is None  # a non-tensor argument
            x, y = ctx.saved_tensors
            return ctx.k * (tx * y.sin() + x * y.cos() * ty), tx + ty

        @staticmethod
        def backward(ctx, g0, g1):
            x, y = ctx.saved_tensors
            return ctx.k * g0 * y.sin() + g1, ctx.k * g0 * x * y.cos() + g1, None

    return ScaledProduct


def _make_cube(lib):
    """x ** 3 in the setup_context style, its output saved for forward."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x**3

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_forward(x, output)
            ctx.save_for_backward(x)

        @staticmethod
        def jvp(ctx, tx):
            x, out = ctx.saved_tensors
            return 3 * out / x * tx  # 3 x^2 t, through the saved output

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    return Cube


ScaledProduct, Cube = _make_scaled_product(tg), _make_cube(tg)


def _fd_jvp(f, xs, ts, eps=1e-6):
    """Central finite difference of f along ts at xs (f on float64 arrays -> list of arrays)."""
    plus = f(*[x + eps * t for x, t in zip(xs, ts)])
    minus = f(*[x - eps * t for x, t in zip(xs, ts)])
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def test_forward_ad_through_a_function_matches_finite_differences_and_torch(rng):
    x, y, tx, ty = (rng.standard_normal(4) for _ in range(4))
    with fwAD.dual_level():
        a, b = ScaledProduct.apply(
            fwAD.make_dual(_t(x), _t(tx)), fwAD.make_dual(_t(y), _t(ty)), 2.5
        )
        ta, tb = fwAD.unpack_dual(a).tangent, fwAD.unpack_dual(b).tangent
        # and on through ordinary ops
        tc = fwAD.unpack_dual((a * b).exp()).tangent

    def f(x, y):
        a, b = ScaledProduct.apply(_t(x), _t(y), 2.5)
        return [a.numpy(), b.numpy(), (a * b).exp().numpy()]

    for got, want in zip((ta, tb, tc), _fd_jvp(f, (x, y), (tx, ty))):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-7, atol=1e-8)
    torch = pytest.importorskip("torch")
    TP = _make_scaled_product(torch)
    tt = [torch.from_numpy(v) for v in (x, y, tx, ty)]
    with torch.autograd.forward_ad.dual_level():
        fa = torch.autograd.forward_ad
        a, b = TP.apply(fa.make_dual(tt[0], tt[2]), fa.make_dual(tt[1], tt[3]), 2.5)
        want = [fa.unpack_dual(v).tangent.numpy() for v in (a, b, (a * b).exp())]
    for got, w in zip((ta, tb, tc), want):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-12, atol=1e-14)


def test_a_tensor_input_without_a_tangent_gets_zeros_and_a_non_tensor_none():
    seen = []

    class Spy(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            return x * y * k

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            seen.append((tx.tolist(), ty if ty is None else ty.tolist(), tk))
            return tx

    class Lazy(Spy):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.set_materialize_grads(False)
            return x * y * k

    with fwAD.dual_level():
        x = fwAD.make_dual(_t([1.0, 2.0]), _t([1.0, 0.0]))
        Spy.apply(x, _t([3.0, 4.0]), 2.0)
        Lazy.apply(x, _t([3.0, 4.0]), 2.0)
    assert seen == [([1.0, 0.0], [0.0, 0.0], None), ([1.0, 0.0], None, None)]


def test_saved_tensors_in_jvp_are_those_saved_for_forward():
    seen = {}

    class Both(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(x)
            ctx.save_for_forward(y)
            return y

        @staticmethod
        def jvp(ctx, tx):
            seen["jvp"] = [t.tolist() for t in ctx.saved_tensors]
            return tx * 2

        @staticmethod
        def backward(ctx, g):
            seen["backward"] = [t.detach().tolist() for t in ctx.saved_tensors]
            return g * 2

    x = _t([1.0, 3.0], requires_grad=True)
    with fwAD.dual_level():
        y = Both.apply(fwAD.make_dual(x, _t([1.0, 1.0])))
        assert fwAD.unpack_dual(y).tangent.tolist() == [2.0, 2.0]
        y.sum().backward()
    assert seen == {"jvp": [[2.0, 6.0]], "backward": [[1.0, 3.0]]}
    assert x.grad.tolist() == [2.0, 2.0]


def test_func_jvp_jacfwd_and_hessian_through_functions(rng):
    x = rng.uniform(0.5, 1.5, 3)
    v = rng.standard_normal(3)

    def f(x):
        a, b = ScaledProduct.apply(Cube.apply(x), x.exp(), 0.7)
        return (a * b).sum() + Cube.apply(b).sum()

    out, jv = tg.func.jvp(f, (_t(x),), (_t(v),))
    (fd,) = _fd_jvp(lambda x: [f(_t(x)).numpy()], (x,), (v,))
    np.testing.assert_allclose(jv.numpy(), fd, rtol=1e-7)
    grad = tg.func.grad(f)(_t(x)).numpy()
    jac = tg.func.jacfwd(f)(_t(x)).numpy()
    np.testing.assert_allclose(jac, grad, rtol=1e-12)  # forward and reverse agree
    hess = tg.func.hessian(f)(_t(x)).numpy()  # forward-over-reverse: jvp of the backward
    eye = np.eye(3)
    fd_hess = np.stack(
        [_fd_jvp(lambda x: [tg.func.grad(f)(_t(x)).numpy()], (x,), (eye[i],))[0] for i in range(3)]
    )
    np.testing.assert_allclose(hess, fd_hess, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-10)
    torch = pytest.importorskip("torch")
    TP, TC = _make_scaled_product(torch), _make_cube(torch)

    def tf(x):
        a, b = TP.apply(TC.apply(x), x.exp(), 0.7)
        return (a * b).sum() + TC.apply(b).sum()

    fa = torch.autograd.forward_ad  # (torch.func.jvp wants setup_context style only)
    with fa.dual_level():
        tjv = fa.unpack_dual(tf(fa.make_dual(torch.from_numpy(x), torch.from_numpy(v)))).tangent
    np.testing.assert_allclose(jv.numpy(), tjv.numpy(), rtol=1e-12)
    thess = torch.autograd.functional.hessian(tf, torch.from_numpy(x))
    np.testing.assert_allclose(hess, thess.numpy(), rtol=1e-10, atol=1e-12)


def test_jacfwd_of_a_vector_function_matches_torch(rng):
    x = rng.uniform(0.5, 1.5, 4)
    jac = tg.func.jacfwd(lambda x: Cube.apply(x) * x.sin())(_t(x)).numpy()
    np.testing.assert_allclose(jac, np.diag(3 * x**2 * np.sin(x) + x**3 * np.cos(x)), rtol=1e-12)
    torch = pytest.importorskip("torch")
    TC = _make_cube(torch)
    want = torch.autograd.functional.jacobian(
        lambda x: TC.apply(x) * x.sin(),
        torch.from_numpy(x),
        strategy="forward-mode",
        vectorize=True,
    )
    np.testing.assert_allclose(jac, want.numpy(), rtol=1e-12)


def test_the_tangent_stays_differentiable_in_reverse_mode(rng):
    """Forward-over-reverse inside one level: jvp runs recorded, so d(tangent)/dx exists."""
    x = rng.uniform(0.5, 1.5, 3)
    xt = _t(x, requires_grad=True)
    with fwAD.dual_level():
        out = Cube.apply(fwAD.make_dual(xt, _t(np.ones(3))))
        tangent = fwAD.unpack_dual(out).tangent
        assert tangent.requires_grad
        tangent.sum().backward()
    np.testing.assert_allclose(xt.grad.detach().numpy(), 6 * x, rtol=1e-12)  # d(3x^2)/dx


def test_in_place_functions_must_update_the_tangent_in_place():
    class Double_(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def jvp(ctx, tx):
            tx.mul_(2)
            return tx

    class DoubleOutOfPlaceTangent(Double_):
        @staticmethod
        def jvp(ctx, tx):
            return tx * 2

    with fwAD.dual_level():
        d = fwAD.make_dual(_t([1.0, 2.0]).clone(), _t([1.0, 3.0]))
        out = Double_.apply(d)
        assert out is d
        assert fwAD.unpack_dual(d).tangent.tolist() == [2.0, 6.0]
        e = fwAD.make_dual(_t([1.0, 2.0]).clone(), _t([1.0, 3.0]))
        with pytest.raises(RuntimeError, match="DoubleOutOfPlaceTangent.jvp: an inplace"):
            DoubleOutOfPlaceTangent.apply(e)


def test_instance_style_functions_define_jvp_as_a_method():
    class Square(tg.autograd.Function):  # MXNet style: the instance is the ctx
        def forward(self, x):
            self.save_for_forward(x)
            return x * x

        def jvp(self, tx):
            (x,) = self.saved_tensors
            return 2 * x * tx

        def backward(self, g):
            return g

    with fwAD.dual_level():
        y = Square()(fwAD.make_dual(_t([3.0]), _t([1.0])))
        assert fwAD.unpack_dual(y).tangent.tolist() == [6.0]


def test_non_differentiable_outputs_carry_no_tangent():
    class WithIndex(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            return x * 2, idx

        @staticmethod
        def jvp(ctx, tx):
            return tx * 2, None

    with fwAD.dual_level():
        y, idx = WithIndex.apply(fwAD.make_dual(_t([1.0, 5.0]), _t([1.0, 1.0])))
        assert fwAD.unpack_dual(y).tangent.tolist() == [2.0, 2.0]
        assert fwAD.unpack_dual(idx).tangent is None


def test_lstm_and_gru_work_in_forward_mode(rng):
    """tg.nn.LSTM/GRU split their gates with custom Functions, which now have jvps."""
    for cls in (tg.nn.LSTM, tg.nn.GRU):
        tg.manual_seed(0)
        net = cls(3, 4, batch_first=True).double()
        x = rng.standard_normal((2, 5, 3))
        v = rng.standard_normal((2, 5, 3))

        def f(x, net=net):
            return net(x)[0]

        _, jv = tg.func.jvp(f, (_t(x),), (_t(v),))
        (fd,) = _fd_jvp(lambda x: [f(_t(x)).detach().numpy()], (x,), (v,))
        np.testing.assert_allclose(jv.detach().numpy(), fd, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- errors
def test_a_function_without_jvp_raises_at_apply_naming_it():
    ran = []

    class NoJvp(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ran.append(1)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with (
        fwAD.dual_level(),
        pytest.raises(NotImplementedError, match=r"NoJvp: You must implement the jvp"),
    ):
        NoJvp.apply(fwAD.make_dual(_t([1.0]), _t([1.0])))
    assert ran == []  # refused before forward ran
    with pytest.raises(NotImplementedError, match="NoJvp"):
        tg.func.jvp(lambda x: NoJvp.apply(x), (_t([1.0]),), (_t([1.0]),))
    with pytest.raises(NotImplementedError, match="NoJvp"):
        tg.func.jacfwd(lambda x: NoJvp.apply(x))(_t([1.0]))
    assert NoJvp.apply(_t([1.0])).tolist() == [2.0]  # without tangents nothing changes


@pytest.mark.parametrize(
    "ret, error, match",
    [
        (lambda tx: (tx, tx), RuntimeError, "Bad.jvp returned an invalid number of forward"),
        (lambda tx: tx.sum(), RuntimeError, "Bad.jvp: Trying to set a forward gradient"),
        (lambda tx: tx.numpy(), TypeError, "Bad.jvp must return Tensors"),
    ],
)
def test_a_wrong_jvp_result_raises_naming_the_function(ret, error, match):
    class Bad(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, tx):
            return ret(tx)

    with fwAD.dual_level(), pytest.raises(error, match=match):
        Bad.apply(fwAD.make_dual(_t([1.0, 2.0]), _t([1.0, 1.0])))


def test_save_for_forward_takes_only_tensors():
    class Saves(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x, 3)
            return x

    with pytest.raises(TypeError, match="save_for_forward expects all arguments to be tensors"):
        Saves.apply(_t([1.0]))


def test_hessian_through_a_backward_that_reads_saved_outputs(rng):
    """Forward-over-reverse where backward uses the outputs (rebuilt from the node): each
    rebuilt output finds its own tangent, for a two-output Function too."""

    class SinCos(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            s, c = x.sin(), x.cos()
            ctx.save_for_backward(s, c)
            ctx.save_for_forward(s, c)
            return s, c

        @staticmethod
        def jvp(ctx, tx):
            s, c = ctx.saved_tensors
            return c * tx, -s * tx

        @staticmethod
        def backward(ctx, gs, gc):
            s, c = ctx.saved_tensors
            return gs * c - gc * s

    def f(x):
        s, c = SinCos.apply(x)
        return (s * s * x + c * x.exp()).sum()

    x = rng.uniform(-1, 1, 3)
    hess = tg.func.hessian(f)(_t(x)).numpy()
    eye = np.eye(3)
    fd = np.stack(
        [_fd_jvp(lambda x: [tg.func.grad(f)(_t(x)).numpy()], (x,), (eye[i],))[0] for i in range(3)]
    )
    np.testing.assert_allclose(hess, fd, rtol=1e-6, atol=1e-7)
