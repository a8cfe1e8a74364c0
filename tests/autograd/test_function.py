"""Custom functions: tg.autograd.Function in PyTorch ctx style and MXNet instance style."""

import weakref

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import Function, gradcheck, gradgradcheck, once_differentiable


class MultiplyAdd(Function):
    """The seed's example, verbatim apart from the import."""

    @staticmethod
    def forward(ctx, w, x, b):
        ctx.save_for_backward(w, x)
        output = w * x + b
        return output

    @staticmethod
    def backward(ctx, grad_output):
        w, x = ctx.saved_tensors
        grad_w = grad_output * x
        grad_x = grad_output * w
        grad_b = grad_output * 1
        return grad_w, grad_x, grad_b


class Mul(Function):
    """The seed's first example: a non-tensor argument and a flag kept on ctx."""

    @staticmethod
    def forward(ctx, w, x, b, x_requires_grad=True):
        ctx.x_requires_grad = x_requires_grad
        ctx.save_for_backward(w, x)
        return w * x + b

    @staticmethod
    def backward(ctx, grad_output):
        w, x = ctx.saved_tensors
        grad_w = grad_output * x
        grad_x = grad_output * w if ctx.x_requires_grad else None
        grad_b = grad_output * 1
        return grad_w, grad_x, grad_b, None


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


def _f64(values, requires_grad=True):
    return tg.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def test_seed_multiply_add():
    x = tg.ones(1)
    w = tg.rand(1, requires_grad=True)
    b = tg.rand(1, requires_grad=True)
    z = MultiplyAdd.apply(w, x, b)
    assert z.grad_fn.name() == "MultiplyAddBackward"
    np.testing.assert_allclose(z.detach().numpy(), w.detach().numpy() + b.detach().numpy())
    z.backward()
    assert x.grad is None  # x requires no grad
    assert w.grad.tolist() == [1.0] and b.grad.tolist() == [1.0]


def test_seed_multiply_add_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w0, x0, b0 = (rng.standard_normal((2, 3)) for _ in range(3))
    w, x, b = _f64(w0), _f64(x0), _f64(b0)
    (MultiplyAdd.apply(w, x, b) * _f64(w0, False)).backward(tg.ones(2, 3, dtype="float64"))

    class TorchMultiplyAdd(torch.autograd.Function):
        forward = MultiplyAdd.forward
        backward = MultiplyAdd.backward

    tw, tx, tb = (torch.tensor(a, requires_grad=True) for a in (w0, x0, b0))
    (TorchMultiplyAdd.apply(tw, tx, tb) * torch.tensor(w0)).sum().backward()
    for ours, theirs in ((w, tw), (x, tx), (b, tb)):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_seed_mul_with_flag_and_needs_input_grad():
    w = tg.tensor([2.0], requires_grad=True)
    x = tg.tensor([3.0], requires_grad=True)
    b = tg.tensor([1.0], requires_grad=True)
    Mul.apply(w, x, b, False).backward()
    assert w.grad.tolist() == [3.0] and x.grad is None and b.grad.tolist() == [1.0]

    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, c, k):
            seen["fwd"] = ctx.needs_input_grad
            return a * c * k

        @staticmethod
        def backward(ctx, g):
            seen["bwd"] = ctx.needs_input_grad
            return g, None, None

    Probe.apply(w, tg.ones(1), 2.0).backward()
    assert seen == {"fwd": (True, False, False), "bwd": (True, False, False)}


def test_forward_runs_unrecorded_on_detached_inputs():
    seen = {}

    class Look(Function):
        @staticmethod
        def forward(ctx, x):
            seen["requires_grad"] = x.requires_grad
            seen["grad_enabled"] = tg.is_grad_enabled()
            y = x * 2
            seen["inner_grad_fn"] = y.grad_fn
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = tg.tensor([1.0], requires_grad=True)
    y = Look.apply(x)
    assert seen == {"requires_grad": False, "grad_enabled": False, "inner_grad_fn": None}
    assert y.grad_fn.name() == "LookBackward" and y.grad_fn.next_functions[0][0] is not None
    assert tg.is_grad_enabled()


def test_no_graph_when_nothing_requires_grad_or_under_no_grad():
    x = tg.tensor([2.0])
    assert Cube.apply(x).grad_fn is None
    xr = tg.tensor([2.0], requires_grad=True)
    with tg.no_grad():
        y = Cube.apply(xr)
    assert y.grad_fn is None and y.tolist() == [8.0]


def test_create_graph_through_custom_backward():
    x = tg.tensor(3.0, requires_grad=True)
    (d1,) = tg.autograd.grad(Cube.apply(x), x, create_graph=True)
    (d2,) = tg.autograd.grad(d1, x, create_graph=True)
    (d3,) = tg.autograd.grad(d2, x)
    assert (d1.item(), d2.item(), d3.item()) == (27.0, 18.0, 6.0)


def test_gradcheck_and_gradgradcheck_of_custom_functions():
    rng = np.random.default_rng(1)
    w, x, b = (_f64(rng.standard_normal((2, 3))) for _ in range(3))
    assert gradcheck(MultiplyAdd.apply, (w, x, b))
    assert gradgradcheck(MultiplyAdd.apply, (w, x, b))
    c = _f64(rng.standard_normal(4))
    assert gradcheck(Cube.apply, (c,))
    assert gradgradcheck(Cube.apply, (c,))


def test_gradcheck_catches_a_wrong_backward():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(Wrong.apply, (_f64([1.0, 2.0]),))


def test_wrong_number_of_gradients_names_the_function():
    class TwoIn(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    a = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"TwoInBackward.*incorrect number of gradients "
        r"\(expected 2, got 1\)",
    ):
        TwoIn.apply(a, a).backward()


def test_extra_trailing_none_gradients_are_allowed():
    class Extra(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    a = tg.tensor([1.0], requires_grad=True)
    Extra.apply(a).backward()
    assert a.grad.tolist() == [2.0]


def test_wrong_gradient_shape_names_function_and_shapes():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return tg.ones(3)

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"BadShapeBackward.*invalid gradient at index 0.*"
        r"\[3\].*\[2\]",
    ):
        BadShape.apply(a).backward(tg.ones(2))
    assert a.grad is None  # nothing half-written


def test_broadcast_gradient_is_summed_back():
    class Wide(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g * tg.ones(4, 1, 2)  # broadcast to (4, 1, 2): summed back to (2,)

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    Wide.apply(a).backward(tg.ones(2))
    assert a.grad.tolist() == [4.0, 4.0]


def test_non_tensor_gradient_is_a_type_error():
    class NotTensor(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return np.ones(2)

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"NotTensorBackward returned a ndarray"):
        NotTensor.apply(a).backward(tg.ones(2))


def test_save_for_backward_rejects_non_tensors():
    class SavesInt(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, 3)
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="argument 1 is of type int"):
        SavesInt.apply(tg.tensor([1.0], requires_grad=True))


def test_saved_tensor_modified_in_place_raises():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    h = a * 1
    y = Cube.apply(h)
    h.mul_(2.0)
    with pytest.raises(
        RuntimeError,
        match=r"modified by an inplace operation: input 0 of "
        r"CubeBackward is at version 1; expected version 0",
    ):
        y.backward(tg.ones(2))


def test_saved_output_is_rebuilt_without_a_cycle():
    class Exp2(Function):  # 2**x: saves its output, like exp
        @staticmethod
        def forward(ctx, x):
            out = 2.0**x
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out * float(np.log(2.0))

    x = _f64([0.5, 1.5])
    assert gradcheck(Exp2.apply, (x,))
    assert gradgradcheck(Exp2.apply, (x,))
    y = Exp2.apply(x)
    assert y.grad_fn.saved[0].__dict__["_tg_saved"][0][0] == "output"
    ref = weakref.ref(y)
    del y
    assert ref() is None  # no output -> node -> ctx -> output cycle: freed at once


def test_saved_non_differentiable_output():
    class WithMask(Function):
        @staticmethod
        def forward(ctx, x):
            mask = x * 0 + 1
            ctx.mark_non_differentiable(mask)
            ctx.save_for_backward(mask)
            return x * 2, mask

        @staticmethod
        def backward(ctx, g, g_mask):
            (mask,) = ctx.saved_tensors
            assert mask.grad_fn is None
            return g * 2 * mask

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y, mask = WithMask.apply(x)
    y.backward(tg.ones(2))
    assert x.grad.tolist() == [2.0, 2.0] and mask.grad_fn is None


def test_once_differentiable():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert not tg.is_grad_enabled()
            return g * 2 * x

    x = tg.tensor(3.0, requires_grad=True)
    Square.apply(x).backward()
    assert x.grad.item() == 6.0
    (d,) = tg.autograd.grad(Square.apply(x), x, create_graph=True)
    assert d.item() == 6.0
    with pytest.raises(
        RuntimeError,
        match=r"differentiate twice a function that was marked "
        r"with @once_differentiable \(SquareBackward\)",
    ):
        tg.autograd.grad(d, x)


def test_mark_dirty_in_place_forward():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1.0)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    h = a * 2
    out = AddOneInPlace.apply(h)
    assert out is h and h.tolist() == [3.0, 5.0]
    assert h.grad_fn.name() == "AddOneInPlaceBackward" and h._version == 1
    (out * out).backward(tg.ones(2))
    assert a.grad.tolist() == [12.0, 20.0]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        AddOneInPlace.apply(tg.tensor([1.0], requires_grad=True))


def test_mark_non_differentiable_and_materialized_grads():
    seen = {}

    class SplitSign(Function):
        @staticmethod
        def forward(ctx, x):
            flag = x * 0
            ctx.mark_non_differentiable(flag)
            return x * 2, flag

        @staticmethod
        def backward(ctx, g, g_flag):
            seen["g_flag"] = g_flag.tolist()
            return g * 2

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y, flag = SplitSign.apply(x)
    assert not flag.requires_grad and y.requires_grad
    y.backward(tg.ones(2))
    assert seen["g_flag"] == [0.0, 0.0] and x.grad.tolist() == [2.0, 2.0]


def test_set_materialize_grads_false_gives_none():
    seen = {}

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen["g2"] = g2
            return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

    x = tg.tensor(1.0, requires_grad=True)
    a, _ = Two.apply(x)
    a.backward()
    assert seen["g2"] is None and x.grad.item() == 2.0
    x.grad = None
    a, b = Two.apply(x)
    (a + b).backward()
    assert x.grad.item() == 5.0


def test_ctx_keeps_any_attribute_and_kwargs():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, *, factor=1.0):
            ctx.factor = factor
            ctx.note = {"anything": [1, 2]}
            return x * factor

        @staticmethod
        def backward(ctx, g):
            assert ctx.note == {"anything": [1, 2]}
            return g * ctx.factor

    x = tg.tensor(1.0, requires_grad=True)
    Scale.apply(x, factor=4.0).backward()
    assert x.grad.item() == 4.0


def test_backward_twice_needs_retain_graph():
    x = tg.tensor(2.0, requires_grad=True)
    y = Cube.apply(x)
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 24.0
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_hook_on_custom_function_output():
    x = tg.tensor(1.0, requires_grad=True)
    y = Cube.apply(x)
    y.register_hook(lambda g: g * 10)
    y.backward()
    assert x.grad.item() == 30.0


def test_setup_context_style():
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    x = _f64([1.0, -2.0])
    assert Square.apply(x).grad_fn.name() == "SquareBackward"
    assert gradcheck(Square.apply, (x,)) and gradgradcheck(Square.apply, (x,))


def test_calling_a_static_function_instance_is_an_error():
    with pytest.raises(TypeError, match=r"Cube.apply"):
        Cube()(tg.tensor(1.0, requires_grad=True))


# ------------------------------------------------------------------ MXNet instance style
class Sigmoidish(Function):
    """MXNet's documented custom-function shape: instance forward/backward, self as ctx."""

    def forward(self, x):
        y = 1 / (1 + 2.0 ** (-x))
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved_tensors
        return dy * y * (1 - y) * float(np.log(2.0))


class SquareAndDouble(Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x * x, x * 2

    def backward(self, dy, dz):
        (x,) = self.saved_tensors
        return dy * 2 * x + dz * 2


def test_mxnet_instance_style_function():
    x = _f64([0.5, -1.0])
    f = Sigmoidish()
    y = f(x)
    assert y.grad_fn.name() == "SigmoidishBackward"
    assert gradcheck(lambda t: Sigmoidish()(t), (x,))


def test_mxnet_instance_style_two_outputs():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y, z = SquareAndDouble()(x)
    (y + z).backward(tg.ones(2))
    assert x.grad.tolist() == [4.0, 6.0]
    x.grad = None
    y, _ = SquareAndDouble()(x)
    y.backward(tg.ones(2))  # the unused output's gradient arrives as zeros
    assert x.grad.tolist() == [2.0, 4.0]


def test_instance_style_apply_also_works():
    x = tg.tensor([1.0], requires_grad=True)
    y, z = SquareAndDouble.apply(x)
    y.backward()
    assert x.grad.tolist() == [2.0]


def test_custom_backward_inside_record_scope_is_safe():
    """MXNet seed: calling backward() while inside record() must work and record nothing."""
    record = getattr(tg.autograd, "record", None)
    if not callable(record):
        pytest.skip("tg.autograd.record is not available yet")
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with record():
        y = Sigmoidish()(x)
        y.backward()
    assert x.grad.shape == (2,)
    s = 1 / (1 + 2.0 ** -np.array([1.0, 2.0]))
    np.testing.assert_allclose(x.grad.numpy(), s * (1 - s) * np.log(2.0), rtol=1e-5)
    assert y.grad_fn is not None  # y was recorded; backward itself added nothing
    assert x.grad.grad_fn is None


def test_custom_backward_with_ambient_grad_enabled_records_nothing():
    seen = {}

    class Look(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            out = g * 2 * (x / x)
            seen["grad_fn"] = out.grad_fn
            return out

    x = tg.tensor(1.0, requires_grad=True)
    Look.apply(x).backward()
    assert seen["grad_fn"] is None and x.grad.item() == 2.0
