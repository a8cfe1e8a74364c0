"""Devices: 'cpu' (NumPy) always; 'cuda' needs CuPy and a GPU, and says so clearly when
either is missing (never an AttributeError or ImportError from deep inside)."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import backend


def _cuda_works() -> bool:
    try:
        backend.cupy()
    except RuntimeError:
        return False
    return True


HAS_CUDA = _cuda_works()
no_cuda = pytest.mark.skipif(HAS_CUDA, reason="checks the error shown without CuPy/GPU")
NEEDS = (
    r"device='cuda' needs CuPy and a GPU: pip install -e \"\.\[cuda\]\" \(from a "
    r"checkout\) or pip install \"tapegrad\[cuda\]\""
)


@no_cuda
@pytest.mark.parametrize(
    "make",
    [
        lambda: tg.tensor([1.0, 2.0], device="cuda"),
        lambda: tg.tensor([1.0], device="cuda:0"),
        lambda: tg.tensor([1.0], device="gpu"),  # MXNet's name
        lambda: tg.tensor([1.0]).to("cuda"),
        lambda: tg.tensor([1.0]).to(device="cuda"),
        lambda: tg.tensor([1.0]).to("cuda", dtype=tg.float64),
        lambda: tg.tensor([1.0]).cuda(),
        lambda: tg.tensor([1.0], requires_grad=True).cuda(),
        lambda: tg.zeros(2, device="cuda"),
        lambda: tg.ones(2, 3, device="cuda"),
        lambda: tg.randn(2, device="cuda"),
        lambda: tg.arange(3, device="cuda"),
        lambda: tg.as_tensor([1.0], device="cuda"),
        lambda: tg.from_numpy(np.ones(2)).cuda(),
    ],
    ids=[
        "tensor",
        "cuda:0",
        "gpu",
        "to",
        "to-kw",
        "to-dtype",
        "cuda()",
        "cuda()-grad",
        "zeros",
        "ones",
        "randn",
        "arange",
        "as_tensor",
        "from_numpy",
    ],
)
def test_cuda_without_cupy_says_what_to_install(make):
    with pytest.raises(RuntimeError, match=NEEDS):
        make()


@no_cuda
def test_failed_move_leaves_everything_as_it_was():
    t = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=NEEDS):
        t.cuda()
    assert t.device == "cpu" and t.requires_grad and t.grad_fn is None
    (t * 3).sum().backward()  # still a working leaf
    np.testing.assert_array_equal(t.grad.numpy(), [3.0, 3.0])

    model = tg.nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match=NEEDS):
        model.cuda()
    with pytest.raises(RuntimeError, match=NEEDS):
        model.to("cuda")
    assert all(p.device == "cpu" for p in model.parameters())
    assert model(tg.ones(1, 3)).shape == (1, 2)


def test_unknown_device_is_a_value_error():
    with pytest.raises(ValueError, match="unknown device 'tpu'; use 'cpu' or 'cuda'"):
        tg.tensor([1.0], device="tpu")
    with pytest.raises(ValueError, match="unknown device 'metal'"):
        tg.ones(2).to("metal")


def test_cpu_is_the_default_and_moves_are_no_ops():
    t = tg.tensor([1.0, 2.0])
    assert t.device == "cpu" and not t.is_cuda
    assert t.to("cpu") is t and t.cpu() is t and t.to(device="cpu:0") is t
    assert tg.zeros(2, device="cpu").device == "cpu"
    assert tg.tensor([1.0], device=None).device == "cpu"
    d = t.to("cpu", dtype=tg.float64)
    assert d.dtype == tg.float64 and d.device == "cpu"
    np.testing.assert_array_equal(d.numpy(), [1.0, 2.0])


def test_cpu_moves_keep_gradients_flowing():
    x = tg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.cpu().to("cpu")
    assert y is x
    (y.to("cpu", dtype=tg.float64) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0, 6.0])
    assert x.grad.dtype == tg.float32

    model = tg.nn.Linear(2, 1)
    assert model.cpu() is model and model.to("cpu") is model
    assert all(p.device == "cpu" for p in model.parameters())


@pytest.mark.skipif(not HAS_CUDA, reason="needs CuPy and a GPU (pip install tapegrad[cuda])")
def test_cuda_round_trip_with_gradients():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x.cuda()
    assert y.device == "cuda" and y.is_cuda
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    assert y.cpu().device == "cpu"
