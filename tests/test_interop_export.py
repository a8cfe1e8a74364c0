"""Tensor.__dlpack__ / __dlpack_device__ (zero-copy export) and NumPy ufuncs on tensors."""

import numpy as np
import pytest

import tapegrad as tg


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_numpy_from_dlpack_shares_memory(dtype):
    t = tg.tensor(np.arange(6).reshape(2, 3).astype(dtype))
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    assert a.shape == (2, 3) and a.dtype == dtype
    assert np.shares_memory(a, t.numpy())
    a[1, 2] = 0
    assert t[1, 2].item() == 0


def test_export_of_a_strided_view_and_a_round_trip():
    t = tg.arange(12.0).reshape(3, 4)[:, ::2]
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, t.numpy())
    back = tg.from_dlpack(a)
    back[0, 1] = -1.0
    assert t[0, 1].item() == -1.0


def test_a_tensor_that_requires_grad_is_refused_naming_detach():
    w = tg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"require gradient.*detach\(\)"):
        np.from_dlpack(w)
    a = np.from_dlpack(w.detach())  # the fix works, and shares w's memory
    a[0] = 5.0
    assert w[0].item() == 5.0


def test_torch_from_dlpack_shares_memory_both_ways():
    torch = pytest.importorskip("torch")
    t = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    x = torch.from_dlpack(t)
    assert x.dtype == torch.float32 and tuple(x.shape) == (2, 2)
    x[0, 1] = 7.0
    assert t[0, 1].item() == 7.0
    t[1, 0] = -3.0
    assert x[1, 0].item() == -3.0
    with pytest.raises(RuntimeError, match=r"detach\(\)"):
        torch.from_dlpack(tg.ones(2, requires_grad=True))


def test_ufuncs_with_a_tapegrad_twin_run_as_ops_and_keep_gradients():
    w = tg.tensor([0.5, 1.0, 2.0], dtype=tg.float64, requires_grad=True)
    y = np.exp(w) * np.array([1.0, 2.0, 3.0]) + np.sin(w)
    assert isinstance(y, tg.Tensor)
    y.sum().backward()
    x = w.detach().numpy()
    np.testing.assert_allclose(w.grad.numpy(), np.exp(x) * [1.0, 2.0, 3.0] + np.cos(x))


def test_other_ufuncs_give_tensors_for_tensors_without_grad():
    t = tg.tensor([0.5, 1.0, 2.0])
    r = np.arctan(t)  # no tg.arctan: NumPy runs it, a tensor comes back (as in PyTorch)
    assert isinstance(r, tg.Tensor) and r.dtype == tg.float32
    np.testing.assert_allclose(r.numpy(), np.arctan([0.5, 1.0, 2.0]), rtol=1e-6)
    s = np.add.reduce(t)
    assert isinstance(s, tg.Tensor) and s.item() == pytest.approx(3.5)
    out = tg.zeros(3)
    before = out._version
    assert np.multiply(t, 2.0, out=out) is out
    np.testing.assert_allclose(out.numpy(), [1.0, 2.0, 4.0])
    assert out._version > before
    np.add.at(out, [0, 0], 1.0)
    assert out[0].item() == 3.0


def test_a_ufunc_numpy_cant_differentiate_names_the_fix():
    w = tg.ones(2, requires_grad=True)
    with pytest.raises(
        TypeError,
        match=r"numpy.arctan: a tensor that requires grad.*"
        r"t.detach\(\).numpy\(\)",
    ):
        np.arctan(w)
    with pytest.raises(TypeError, match=r"numpy.add.reduce: .*requires grad"):
        np.add.reduce(w)
    with pytest.raises(TypeError, match=r"numpy.exp: .*tg.exp\(\.\.\.\)"):
        np.exp(w, out=np.zeros(2))


def test_reflected_operators_with_numpy_values_still_give_recorded_tensors():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    for y in (np.ones(2) - w, np.float32(3) / w, np.arange(2) ** w, np.ones(2) > w):
        assert isinstance(y, tg.Tensor)
    (np.float32(3) / w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), -3 / np.array([1.0, 4.0]))
