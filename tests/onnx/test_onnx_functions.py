"""Custom autograd Functions in an ONNX export: a static `symbolic(g, *args)` writes the
nodes (PyTorch's convention); without one, the Function's forward is traced through."""

from __future__ import annotations

import io

import numpy as np
import pytest

import tapegrad as tg

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
nn = tg.nn


class _ClipBelow(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x, low):
        ctx.save_for_backward(x)
        ctx.low = low
        return tg.maximum(x, tg.tensor(low, dtype=x.dtype))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > ctx.low), None

    @staticmethod
    def symbolic(g, x, low):
        assert x.shape is not None and x.dtype == np.float32  # traced facts of the input
        return g.op("Clip", x, g.constant(low, x.dtype))


class _ClipBelowTraced(tg.autograd.Function):
    forward = _ClipBelow.forward
    backward = _ClipBelow.backward


class _SplitHalves(tg.autograd.Function):
    """Two outputs, attributes with PyTorch's type suffixes."""

    @staticmethod
    def forward(ctx, x, scale):
        n = x.shape[-1] // 2
        return x[..., :n] * scale, tg.nn.functional.leaky_relu(x[..., n:], 0.2)

    @staticmethod
    def backward(ctx, a, b):
        raise NotImplementedError

    @staticmethod
    def symbolic(g, x, scale):
        n = x.shape[-1] // 2
        a, b = g.op("Split", x, g.constant(np.array([n, n], np.int64)), axis_i=-1, outputs=2)
        return g.op("Mul", a, g.constant(scale, x.dtype)), g.op("LeakyRelu", b, alpha_f=0.2)


class _Net(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.fn = fn

    def forward(self, x):
        y = self.fn.apply(self.fc(x), -0.1) if self.fn is not _SplitHalves else None
        if y is None:
            a, b = _SplitHalves.apply(self.fc(x), 3.0)
            return a + b
        return y * 2


def _run(module, x, dynamic=True):
    f = io.BytesIO()
    model = tg.onnx.export(
        module,
        x,
        f,
        dynamic_axes={"input": {0: "n"}, "output": {0: "n"}} if dynamic else None,
    )
    sess = ort.InferenceSession(f.getvalue(), providers=["CPUExecutionProvider"])
    return model, sess


@pytest.mark.parametrize("fn", [_ClipBelow, _SplitHalves], ids=lambda c: c.__name__)
def test_symbolic_writes_the_nodes_and_matches_eager(fn, rng):
    tg.manual_seed(0)
    net = _Net(fn).eval()
    x = tg.tensor(rng.standard_normal((2, 4)), dtype=tg.float32)
    model, sess = _run(net, x)
    ops = [n.op_type for n in model.graph.node]
    assert ("Clip" if fn is _ClipBelow else "Split") in ops
    assert "Max" not in ops  # the forward's own ops were not traced
    for n in (2, 7):
        x = tg.tensor(rng.standard_normal((n, 4)), dtype=tg.float32)
        with tg.no_grad():
            want = net(x).numpy()
        got = sess.run(None, {"input": x.numpy()})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_function_without_symbolic_is_traced_through(rng):
    tg.manual_seed(0)
    net = _Net(_ClipBelowTraced).eval()
    x = tg.tensor(rng.standard_normal((3, 4)), dtype=tg.float32)
    model, sess = _run(net, x)
    assert "Max" in [n.op_type for n in model.graph.node]
    with tg.no_grad():
        want = net(x).numpy()
    np.testing.assert_allclose(sess.run(None, {"input": x.numpy()})[0], want, atol=1e-6)


def test_function_with_symbolic_still_differentiates_and_compiles(rng):
    x = tg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = _ClipBelow.apply(x, 0.0).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), (x.detach().numpy() > 0).astype(float))
    compiled = tg.compile(lambda t: _ClipBelow.apply(t, 0.0) * 2)
    for _ in range(2):
        np.testing.assert_array_equal(
            compiled(x).detach().numpy(), np.maximum(x.detach().numpy(), 0) * 2
        )


class _Wrong(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, a, b):
        return a * 2 + b * 3

    @staticmethod
    def symbolic(g, x):
        return g.op("Mul", x, 2.0)


class _UsesWrong(nn.Module):
    def forward(self, x):
        a, b = _Wrong.apply(x)
        return a + b


def test_symbolic_returning_too_few_values_is_named(rng):
    x = tg.tensor(rng.standard_normal((2, 3)), dtype=tg.float32)
    match = r"_Wrong\.symbolic \(in layer \(root\) \(_UsesWrong\)\)"
    with pytest.raises(RuntimeError, match=match):
        tg.onnx.export(_UsesWrong(), x, io.BytesIO())


class _Custom(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def symbolic(g, x):
        return g.op("AddOne", x, domain="my.ops", mode_s="fast")


def test_custom_domain_is_imported(rng):
    class Net(nn.Module):
        def forward(self, x):
            return _Custom.apply(x)

    model = tg.onnx.export(Net(), tg.ones(2), io.BytesIO())
    node = next(n for n in model.graph.node if n.op_type == "AddOne")
    assert node.domain == "my.ops"
    assert onnx.helper.get_attribute_value(node.attribute[0]) == b"fast"
    assert {(o.domain, o.version) for o in model.opset_import} == {("", 17), ("my.ops", 1)}


def test_bad_input_to_g_op_is_named():
    class Bad(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def symbolic(g, x):
            return g.op("Relu", "x")

    class Net(nn.Module):
        def forward(self, x):
            return Bad.apply(x)

    with pytest.raises(TypeError, match=r"Bad\.symbolic.*input 0 of g\.op\('Relu'\) is a str"):
        tg.onnx.export(Net(), tg.ones(2), io.BytesIO())


def test_torch_facade_function_with_symbolic(tmp_path, rng):
    import tapegrad.compat.torch as torch

    class Swish(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, beta):
            return x * torch.sigmoid(x * beta)

        @staticmethod
        def backward(ctx, g):
            raise NotImplementedError

        @staticmethod
        def symbolic(g, x, beta):
            scaled = g.op("Mul", x, g.op("Constant", value_t=torch.tensor(beta)))
            return g.op("Mul", x, g.op("Sigmoid", scaled))

    class Net(torch.nn.Module):
        def forward(self, x):
            return Swish.apply(x, 1.5)

    path = tmp_path / "swish.onnx"
    x = torch.tensor(rng.standard_normal((2, 3)), dtype=torch.float32)
    torch.onnx.export(Net(), (x,), str(path), input_names=["x"], output_names=["y"])
    ops = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert ops.count("Sigmoid") == 1 and "Constant" in ops
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"x": x.numpy()}
    )[0]
    np.testing.assert_allclose(got, (x * torch.sigmoid(x * 1.5)).numpy(), rtol=1e-5, atol=1e-6)


def test_a_python_float_given_to_g_op_is_a_default_dtype_constant(rng):
    # as PyTorch's g.op: a Python float is a constant of the default dtype (float32), so
    # `g.op("Mul", x, 2.0)` on a float32 x is a graph onnxruntime loads (a float64 constant
    # made Mul's two inputs of two types)
    class Scale(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0 + 1

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

        @staticmethod
        def symbolic(g, x):
            return g.op("Add", g.op("Mul", x, 2.0), g.constant(1.0))

    class Net(nn.Module):
        def forward(self, x):
            return Scale.apply(x)

    x = tg.tensor(rng.standard_normal((2, 3)), dtype=tg.float32)
    _, sess = _run(Net(), x)
    got = sess.run(None, {"input": x.numpy()})[0]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, x.numpy() * 2.0 + 1.0, rtol=1e-6)
