"""`mge.Tensor` and `mge.Parameter`: the MegEngine facade's own array types, whose
methods follow MegEngine 1.13, flowing through ops, GradManager gradients and modules."""

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.functional as F
import tapegrad.compat.megengine.module as M
from tapegrad.compat.megengine.autodiff import GradManager


def version(t) -> int:
    v = t._version
    return v[0] if isinstance(v, list) else v


def test_creation_and_functional_results_are_mge_tensors():
    for t in (
        mge.tensor([1.0]),
        mge.Tensor([1, 2]),
        F.zeros((2,)),
        F.ones(2),
        F.full((2,), 3.0),
        F.arange(3),
        F.linspace(0, 1, 3),
        F.zeros_like(mge.tensor([1.0])),
        F.ones_like(mge.tensor([1.0])),
        mge.random.normal(size=(2,)),
        mge.random.uniform(size=(2,)),
    ):
        assert type(t) is mge.Tensor
    a = mge.tensor([[1.0, 2.0], [3.0, 4.0]])
    for t in (
        a * 2,
        F.exp(a),
        F.matmul(a, a),
        F.max(a, axis=0),
        F.transpose(a, (1, 0)),
        F.nn.relu(a),
        a + tg.ones(2),
    ):
        assert type(t) is mge.Tensor
    assert F.arange(3).numpy().tolist() == [0.0, 1.0, 2.0]
    np.testing.assert_allclose(F.linspace(0, 1, 3).numpy(), [0.0, 0.5, 1.0])


def test_methods_follow_megengine():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = mge.tensor(data, name="x")
    assert x.name == "x" and (x * 1).name is None
    x.name = "renamed"
    assert x.name == "renamed"
    assert x.size == 6 and isinstance(x.size, int)
    assert x.shape == (2, 3) and x.ndim == 2 and x.dtype == np.float32
    np.testing.assert_array_equal(x.transpose().numpy(), data.T)  # no pattern: reversed
    np.testing.assert_array_equal(x.transpose(1, 0).numpy(), data.T)
    np.testing.assert_array_equal(x.transpose((1, 0)).numpy(), data.T)
    np.testing.assert_array_equal(x.T.numpy(), data.T)
    np.testing.assert_array_equal(x.reshape(3, 2).numpy(), data.reshape(3, 2))
    assert x.flatten().shape == (6,) and type(x.flatten()) is mge.Tensor
    assert x.astype("int32").dtype == np.int32 and type(x.astype("int32")) is mge.Tensor
    assert mge.tensor([2.5]).item() == 2.5
    assert type(x.detach()) is mge.Tensor
    np.testing.assert_array_equal(x.max(axis=0).numpy(), data.max(axis=0))  # values only
    np.testing.assert_array_equal(
        x.min(axis=1, keepdims=True).numpy(), data.min(axis=1, keepdims=True)
    )
    assert x.max().item() == 5.0 and x.sum(axis=1).numpy().tolist() == [3.0, 12.0]


def test_numpy_is_a_copy_that_works_while_a_gradmanager_records():
    w = mge.Parameter([1.0, 2.0])
    gm = GradManager().attach([w])
    with gm:
        y = (w * w).sum()
        values = w.numpy()  # MegEngine: always available
        values[0] = 100.0
        gm.backward(y)
    assert w.numpy().tolist() == [1.0, 2.0]  # a copy
    assert type(w.grad) is mge.Tensor  # a Parameter's gradient is a Tensor, as in MegEngine
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 4.0])


def test_set_value_and_reset_zero_write_in_place():
    x = mge.tensor([1.0, 2.0])
    alias = x.detach()  # shares storage
    v0 = version(x)
    assert x.set_value(mge.tensor([5.0, 6.0])) is x
    assert x.numpy().tolist() == [5.0, 6.0] and alias.numpy().tolist() == [5.0, 6.0]
    assert version(x) == v0 + 1
    x.set_value([7.0, 8.0])
    assert x.numpy().tolist() == [7.0, 8.0]
    x.reset_zero()
    assert x.numpy().tolist() == [0.0, 0.0] and version(x) == v0 + 3
    with pytest.raises(ValueError, match="shape"):
        x.set_value([1.0, 2.0, 3.0])


def test_module_parameters_are_mge_parameters_untracked_until_attached():
    lin = M.Linear(3, 2)
    params = list(lin.parameters())
    assert len(params) == 2
    assert all(type(p) is mge.Parameter for p in params)
    assert all(isinstance(p, tg.nn.Parameter) and not p.requires_grad for p in params)
    x = mge.tensor(np.ones((4, 3), dtype=np.float32))
    gm = GradManager().attach(lin.parameters())
    with gm:
        loss = lin(x).sum()
        gm.backward(loss)
    assert type(loss) is mge.Tensor
    assert type(lin.weight.grad) is mge.Tensor
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.full((2, 3), 4.0))
    opt = mge.optimizer.SGD(lin.parameters(), lr=0.5)
    before = lin.bias.numpy()
    opt.step().clear_grad()
    np.testing.assert_allclose(lin.bias.numpy(), before - 0.5 * 4.0)
    assert type(lin.bias) is mge.Parameter and lin.bias.grad is None


def test_core_parameters_keep_pytorch_gradients():
    p = tg.nn.Parameter(tg.tensor([1.0, 2.0]))
    (p * p).sum().backward()
    assert type(p.grad) is tg.Tensor and type(p.detach()) is tg.Tensor
    assert type(p * 2) is tg.Tensor  # an op on a Parameter gives a Tensor, as in PyTorch
    q = mge.Parameter([1.0, 2.0])
    assert type(q * 2) is mge.Tensor and type(q + p) is mge.Tensor


def test_pickle_and_deepcopy_keep_the_classes():
    import copy
    import pickle

    lin = M.Linear(2, 2)
    clone = copy.deepcopy(lin)
    assert type(clone.weight) is mge.Parameter and not clone.weight.requires_grad
    np.testing.assert_array_equal(clone.weight.numpy(), lin.weight.numpy())
    p = pickle.loads(pickle.dumps(mge.Parameter([1.0, 2.0], name="w")))
    assert type(p) is mge.Parameter and p.name == "w" and p.numpy().tolist() == [1.0, 2.0]
    t = pickle.loads(pickle.dumps(mge.tensor([3.0], name="t")))
    assert type(t) is mge.Tensor and t.name == "t" and t.numpy().tolist() == [3.0]


def test_tensors_print_as_megengine_prints_them():
    assert repr(mge.tensor([1.0, 2.5])) == "Tensor([1.  2.5], device=cpu)"
    assert repr(mge.tensor([1, 2])) == "Tensor([1 2], dtype=int32, device=cpu)"
    assert repr(mge.tensor([1 / 3])) == "Tensor([0.3333], device=cpu)"  # four digits
    assert repr(mge.Parameter([1.0])).startswith("Parameter([1.]")
