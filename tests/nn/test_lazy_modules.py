"""Lazy layers (nn/lazy.py): the shapes come from the first input, the values from the same
draws the eager layer's constructor makes, and the module becomes the eager layer; against
PyTorch's lazy layers for names, reprs, shapes, values and gradients."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.nn.lazy import LazyModuleMixin
from tapegrad.nn.parameter import UninitializedBuffer, UninitializedParameter

# (lazy class name, constructor arguments, input shape, eager class name, eager arguments)
CASES = [
    ("LazyLinear", (4,), (2, 3), "Linear", (3, 4)),
    ("LazyLinear", (4, False), (2, 5, 3), "Linear", (3, 4, False)),
    ("LazyConv1d", (4, 3), (2, 5, 8), "Conv1d", (5, 4, 3)),
    ("LazyConv1d", (4, 3), (5, 8), "Conv1d", (5, 4, 3)),  # unbatched
    ("LazyConv2d", (6, 3, 2, 1, 1, 3), (2, 3, 7, 7), "Conv2d", (3, 6, 3, 2, 1, 1, 3)),
    ("LazyConv3d", (2, 2), (1, 3, 3, 3, 3), "Conv3d", (3, 2, 2)),
    ("LazyConvTranspose1d", (4, 2, 2), (1, 3, 5), "ConvTranspose1d", (3, 4, 2, 2)),
    ("LazyConvTranspose2d", (4, 3, 2, 1), (2, 3, 4, 4), "ConvTranspose2d", (3, 4, 3, 2, 1)),
    ("LazyConvTranspose3d", (2, 2, 2), (1, 3, 2, 2, 2), "ConvTranspose3d", (3, 2, 2, 2)),
    ("LazyBatchNorm1d", (), (4, 3), "BatchNorm1d", (3,)),
    ("LazyBatchNorm2d", (1e-3, 0.2), (2, 3, 4, 4), "BatchNorm2d", (3, 1e-3, 0.2)),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2), "BatchNorm3d", (3,)),
    ("LazyInstanceNorm1d", (), (2, 3, 5), "InstanceNorm1d", (3, 1e-5, 0.1, True, True)),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4), "InstanceNorm2d", (3, 1e-5, 0.1, True, True)),
    ("LazyInstanceNorm3d", (), (1, 2, 3, 3, 3), "InstanceNorm3d", (2, 1e-5, 0.1, True, True)),
]
IDS = [f"{c[0]}-{len(c[2])}d" for c in CASES]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("lazy, args, shape, eager, eager_args", CASES, ids=IDS)
def test_the_first_call_makes_the_eager_layer_with_the_same_draws(
    lazy, args, shape, eager, eager_args
):
    x = tg.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    m = getattr(tg.nn, lazy)(*args)
    assert m.has_uninitialized_params()
    assert all(isinstance(p, UninitializedParameter) for p in m.parameters())
    tg.manual_seed(3)
    y = m(x)
    tg.manual_seed(3)
    ref = getattr(tg.nn, eager)(*eager_args)
    assert type(m) is type(ref)
    assert repr(m) == repr(ref)
    assert not hasattr(m, "_lazy_hook")
    np.testing.assert_array_equal(y.detach().numpy(), ref(x).detach().numpy())
    for (name, p), (ref_name, q) in zip(m.state_dict().items(), ref.state_dict().items()):
        assert name == ref_name and type(p) is type(q)  # (after one forward each)
        np.testing.assert_array_equal(p.numpy(), q.numpy())


@pytest.mark.parametrize("lazy, args, shape, eager, eager_args", CASES, ids=IDS)
def test_names_reprs_shapes_values_and_gradients_match_pytorch(
    torch, lazy, args, shape, eager, eager_args
):
    x = np.random.default_rng(1).standard_normal(shape)
    m, tm = getattr(tg.nn, lazy)(*args).double(), getattr(torch.nn, lazy)(*args).double()
    assert repr(m) == repr(tm)
    xt = torch.tensor(x, requires_grad=True)
    tm(xt)  # PyTorch's layer materializes; ours takes its values
    m(tg.tensor(x))
    assert type(m).__name__ == type(tm).__name__ == eager
    assert repr(m) == repr(tm)
    m.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    for (k, v), (tk, tv) in zip(m.state_dict().items(), tm.state_dict().items()):
        assert k == tk and tuple(v.shape) == tuple(tv.shape)
    xg = tg.tensor(x, requires_grad=True)
    y, ty = m(xg), tm(xt)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-11)
    for p, tp in zip(m.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-11)


def test_a_lazy_layer_trains_inside_a_model_built_before_the_data():
    tg.manual_seed(0)
    model = tg.nn.Sequential(
        tg.nn.LazyConv2d(4, 3), tg.nn.ReLU(), tg.nn.Flatten(), tg.nn.LazyLinear(2)
    )
    x, target = tg.randn(8, 3, 6, 6), tg.randn(8, 2)
    model(x)  # the dry run
    assert [type(m).__name__ for m in model] == ["Conv2d", "ReLU", "Flatten", "Linear"]
    assert model[3].weight.shape == (2, 64)
    opt = tg.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]


def test_a_state_dict_gives_the_shapes_before_any_call():
    ref = tg.nn.Conv2d(6, 4, 3, groups=2)
    m = tg.nn.LazyConv2d(4, 3, groups=2)
    m.load_state_dict(ref.state_dict())
    assert not m.has_uninitialized_params()
    x = tg.randn(1, 6, 5, 5)
    np.testing.assert_array_equal(m(x).detach().numpy(), ref(x).detach().numpy())
    assert type(m) is tg.nn.Conv2d and m.in_channels == 6
    bn = tg.nn.LazyBatchNorm1d()
    bn.load_state_dict(tg.nn.BatchNorm1d(5).state_dict())
    bn(tg.randn(3, 5))
    assert type(bn) is tg.nn.BatchNorm1d and bn.num_features == 5


def test_uninitialized_tensors_refuse_their_shape_and_become_plain_ones():
    p, b = UninitializedParameter(dtype=tg.float64), UninitializedBuffer()
    for t in (p, b):
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
            _ = t.shape
        with pytest.raises(ValueError, match="uninitialized parameter in numel"):
            t.numel()
    assert repr(p) == "<UninitializedParameter>" and repr(b) == "<UninitializedBuffer>"
    p.materialize((2, 3))
    b.materialize((4,), dtype=tg.float64)
    assert type(p) is tg.nn.Parameter and p.shape == (2, 3) and p.dtype == tg.float64
    assert p.requires_grad
    assert type(b) is tg.Tensor and b.shape == (4,) and not b.requires_grad


def test_bad_first_inputs_are_refused_by_name():
    with pytest.raises(
        RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"
    ):
        tg.nn.LazyConv2d(4, 3)(tg.ones(5, 5))
    with pytest.raises(
        ValueError, match=r"LazyConv2d: in_channels \(3\) must be divisible by groups \(2\)"
    ):
        tg.nn.LazyConv2d(4, 3, groups=2)(tg.ones(1, 3, 5, 5))


def test_a_custom_lazy_module_must_materialize_everything():
    class Forgetful(LazyModuleMixin, tg.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = UninitializedParameter()

        def initialize_parameters(self, x):
            pass

        def forward(self, x):
            return x

    with pytest.raises(RuntimeError, match="Forgetful has not been fully initialized"):
        Forgetful()(tg.ones(2))


def test_the_torch_facade_has_the_import_paths(torch):
    import importlib

    lazy = importlib.import_module("tapegrad.compat.torch.nn.modules.lazy")
    parameter = importlib.import_module("tapegrad.compat.torch.nn.parameter")
    facade_mixin, facade_param = lazy.LazyModuleMixin, parameter.UninitializedParameter

    assert facade_mixin is LazyModuleMixin and facade_param is UninitializedParameter
    assert torch.nn.modules.lazy.LazyModuleMixin.__name__ == facade_mixin.__name__
