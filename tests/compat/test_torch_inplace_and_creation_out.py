"""The torch facade's module-level in-place forms (`torch.sin_(x)`) and `out=` on the
factories (`torch.zeros(2, 3, out=t)`), against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.torch as ftorch
from tapegrad.compat.torch import _inplace


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _inplace_methods():
    return sorted(n for n in dir(tg.Tensor) if n.endswith("_") and not n.startswith("_"))


def test_every_inplace_method_torch_has_at_module_level_exists(torch):
    both = [n for n in _inplace_methods() if hasattr(torch, n)]
    assert len(both) >= 30  # the comparison saw real names
    missing = [n for n in both if not hasattr(ftorch, n)]
    assert not missing, f"torch.X_ forms missing from the facade: {missing}"
    # and the facade adds none that PyTorch lacks
    assert [n for n in _inplace.__all__ if not hasattr(torch, n)] == []


_ARGS = {  # name -> (input, extra arguments as plain values)
    "clamp_": ([-1.0, 0.2, 3.0], (0.0, 1.0)),
    "clip_": ([-1.0, 0.2, 3.0], (0.0, 1.0)),
    "fill_": ([1.0, 2.0], (5.0,)),
    "logit_": ([0.2, 0.5, 0.9], ()),
    "log_": ([0.2, 1.5], ()),
    "log10_": ([0.2, 1.5], ()),
    "log1p_": ([0.2, 1.5], ()),
    "sqrt_": ([0.2, 1.5], ()),
    "rsqrt_": ([0.2, 1.5], ()),
    "nan_to_num_": ([float("nan"), float("inf"), 1.0], ()),
}
_UNARY = [n for n in _inplace.__all__ if n not in ("index_put_", "xlogy_", "detach_")]


@pytest.mark.parametrize("name", _UNARY)
def test_inplace_forms_write_into_the_input_as_torch(torch, name):
    values, extra = _ARGS.get(name, ([-1.5, -0.25, 0.5, 2.7], ()))
    x = ftorch.tensor(values, dtype=ftorch.float64)
    version = x._version
    got = getattr(ftorch, name)(x, *extra)
    xt = torch.tensor(values, dtype=torch.float64)
    ref = getattr(torch, name)(xt, *extra)
    assert got is x and ref is xt and x._version > version
    np.testing.assert_allclose(x.numpy(), xt.numpy(), rtol=1e-12, equal_nan=True)


def test_the_forms_with_tensor_arguments(torch):
    x, xt = ftorch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    ftorch.xlogy_(x, ftorch.tensor([3.0, 0.5]))
    torch.xlogy_(xt, torch.tensor([3.0, 0.5]))
    np.testing.assert_allclose(x.numpy(), xt.numpy(), rtol=1e-6)
    x, xt = ftorch.zeros(3), torch.zeros(3)
    ftorch.index_put_(x, (ftorch.tensor([0, 2]),), ftorch.tensor([1.0, 2.0]))
    torch.index_put_(xt, (torch.tensor([0, 2]),), torch.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(x.numpy(), xt.numpy())
    y = ftorch.ones(2, requires_grad=True) * 2
    assert ftorch.detach_(y) is y and not y.requires_grad


def test_gradients_flow_through_an_inplace_form(torch):
    a = np.array([-1.0, 0.3, 2.0])
    x = ftorch.tensor(a, requires_grad=True)
    y = x * 2
    ftorch.sigmoid_(y)
    (y * y).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    yt = xt * 2
    torch.sigmoid_(yt)
    (yt * yt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_a_leaf_that_requires_grad_is_refused(torch):
    with pytest.raises(RuntimeError, match="leaf"):
        ftorch.exp_(ftorch.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="leaf"):
        torch.exp_(torch.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match=r"torch\.exp_\(\): argument 'input' must be a Tensor"):
        ftorch.exp_([1.0])


# ------------------------------------------------------------------ out= on the factories
CREATION = [
    ("zeros", (2, 3), "float64", (0,)),
    ("zeros", (2, 3), "int64", (2, 3)),
    ("ones", ((2, 2),), "float32", (2, 2)),
    ("empty", (0,), "int64", (5,)),
    ("full", ((2,), 7.5), "int64", (0,)),
    ("arange", (5,), "float32", (5,)),
    ("arange", (1, 4, 0.5), "float64", (0,)),
    ("linspace", (0, 1, 5), "float64", (0,)),
    ("linspace", (0, 1, 3), "int64", (3,)),
    ("eye", (2,), "int64", (0,)),
    ("eye", (2, 3), "float32", (0,)),
]


@pytest.mark.parametrize("name,args,dtype,out_shape", CREATION)
def test_factories_write_into_out_as_torch(torch, name, args, dtype, out_shape):
    out = ftorch.empty(out_shape, dtype=getattr(ftorch, dtype))
    out_t = torch.empty(out_shape, dtype=getattr(torch, dtype))
    version = out._version
    got = getattr(ftorch, name)(*args, out=out)
    ref = getattr(torch, name)(*args, out=out_t)
    assert got is out and ref is out_t and out._version > version
    assert out.shape == tuple(out_t.shape) and str(out.dtype) == dtype
    if name != "empty":
        np.testing.assert_allclose(out.numpy(), out_t.numpy(), rtol=1e-6)


def test_out_of_a_view_writes_into_its_base(torch):
    x, xt = ftorch.zeros(4), torch.zeros(4)
    ftorch.ones(2, out=x[:2])
    torch.ones(2, out=xt[:2])
    np.testing.assert_array_equal(x.numpy(), xt.numpy())


@pytest.mark.parametrize(
    "name,args", [("rand", (3,)), ("randn", (2, 2)), ("randint", (0, 5, (4,)))]
)
def test_random_factories_fill_out_in_its_dtype(torch, name, args):
    out, out_t = ftorch.empty(0, dtype=ftorch.float64), torch.empty(0, dtype=torch.float64)
    assert getattr(ftorch, name)(*args, out=out) is out
    getattr(torch, name)(*args, out=out_t)
    assert out.shape == tuple(out_t.shape) and out.dtype == ftorch.float64
    if name == "rand":
        assert float(out.min()) >= 0.0 and float(out.max()) < 1.0


def test_factory_out_errors_as_torch(torch):
    with pytest.raises(RuntimeError, match="does not match the dtype of the out"):
        ftorch.zeros(2, out=ftorch.empty(2), dtype=ftorch.float64)
    with pytest.raises(RuntimeError, match="does not match dtype of out"):
        torch.zeros(2, out=torch.empty(2), dtype=torch.float64)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ftorch.zeros(2, out=ftorch.empty(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        torch.zeros(2, out=torch.empty(2, requires_grad=True))
    with pytest.raises(TypeError, match=r"zeros\(\): argument 'out' must be a Tensor"):
        ftorch.zeros(2, out=np.zeros(2))
    # requires_grad=True with out= marks out, as PyTorch
    out = ftorch.empty(3)
    ftorch.zeros(3, out=out, requires_grad=True)
    assert (
        out.requires_grad and torch.zeros(3, out=torch.empty(3), requires_grad=True).requires_grad
    )
