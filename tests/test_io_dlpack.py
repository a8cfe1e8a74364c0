"""tg.from_dlpack: zero-copy import from NumPy and PyTorch."""

import numpy as np
import pytest

import tapegrad as tg


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_from_numpy_shares_memory(dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    t = tg.from_dlpack(a)
    assert t.shape == (2, 3) and t.dtype == dtype
    assert np.shares_memory(t.numpy(), a)
    t[0, 1] = 0
    assert a[0, 1] == 0


def test_strided_view_and_gradients():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    t = tg.from_dlpack(a)
    np.testing.assert_array_equal(t.numpy(), a)
    assert np.shares_memory(t.numpy(), a)
    t.requires_grad_(True)
    (t * t).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), 2 * a)


def test_from_torch_shares_memory():
    torch = pytest.importorskip("torch")
    x = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    t = tg.from_dlpack(x)
    t[1, 2] = -5.0
    assert x[1, 2].item() == -5.0
    x[0, 0] = 42.0
    assert t[0, 0].item() == 42.0
    tt = tg.from_dlpack(x.t())  # a transposed (non-contiguous) view
    np.testing.assert_array_equal(tt.numpy(), x.t().numpy())
    with pytest.raises(RuntimeError, match=r"requires grad.*x.detach\(\)"):
        tg.from_dlpack(torch.ones(2, requires_grad=True))


def test_bad_inputs():
    t = tg.ones(2)
    assert tg.from_dlpack(t) is t
    with pytest.raises(TypeError, match="expected an object with __dlpack__.*got list"):
        tg.from_dlpack([1, 2])
    torch = pytest.importorskip("torch")
    cap = torch.utils.dlpack.to_dlpack(torch.ones(2))
    with pytest.raises(TypeError, match="bare DLPack capsule"):
        tg.from_dlpack(cap)
