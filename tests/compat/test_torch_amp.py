"""The torch facade's `torch.amp` (compat/torch/amp.py): GradScaler's dynamic loss scaling
step for step against PyTorch's on the CPU (skipped steps on infinite or NaN gradients,
backoff, growth, state dicts, misuse errors); autocast accepted and, enabled, warning that
the block runs in full precision; the deprecated torch.cuda.amp spellings."""

import warnings

import numpy as np
import pytest

from tapegrad.compat import torch as ttorch


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _run(lib, steps, poison):
    """A small regression trained with a GradScaler; `poison[i]` puts inf/NaN into a
    gradient at step i. Returns the weights, the scale after each update and the state."""
    gen = np.random.default_rng(0)
    w0, x, y = gen.standard_normal((3, 1)), gen.standard_normal((8, 3)), gen.standard_normal((8, 1))
    w = lib.nn.Parameter(lib.tensor(w0, dtype=lib.float32))
    opt = lib.optim.SGD([w], lr=0.05, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    X, Y = lib.tensor(x, dtype=lib.float32), lib.tensor(y, dtype=lib.float32)
    scales = []
    for i in range(steps):
        opt.zero_grad()
        loss = ((X @ w - Y) ** 2).mean()
        scaler.scale(loss).backward()
        if poison.get(i) is not None:
            with lib.no_grad():
                w.grad[0, 0] = poison[i]
        if i % 2:
            scaler.unscale_(opt)  # as before gradient clipping
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return w.detach().numpy().copy(), scales, scaler.state_dict()


def test_grad_scaler_follows_pytorch_step_for_step(torch):
    poison = {2: float("inf"), 3: float("nan"), 9: float("-inf")}
    w, scales, state = _run(ttorch, 14, poison)
    tw, tscales, tstate = _run(torch, 14, poison)
    assert scales == tscales
    assert state == tstate
    np.testing.assert_allclose(w, tw, rtol=1e-5, atol=1e-6)
    assert scales[2] == 512.0 and scales[3] == 256.0  # backoff on each poisoned step


def test_scale_outputs_and_disabled_scalers(torch):
    s = ttorch.amp.GradScaler("cpu", init_scale=4.0)
    assert s.get_scale() == 4.0 and s.is_enabled()
    out = s.scale([ttorch.ones(1), (ttorch.ones(2),)])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    np.testing.assert_array_equal(out[1][0].numpy(), [4.0, 4.0])
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        s.scale(3.0)
    off = ttorch.amp.GradScaler("cpu", enabled=False)
    p = ttorch.nn.Parameter(ttorch.ones(1))
    p.grad = ttorch.ones(1)
    opt = ttorch.optim.SGD([p], lr=1.0)
    loss = ttorch.ones(()) * 3
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    off.step(opt)
    off.update()
    np.testing.assert_array_equal(p.detach().numpy(), [0.0])
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling"):
        cuda = ttorch.amp.GradScaler("cuda")
    assert not cuda.is_enabled()


def test_misuse_raises_as_pytorch():
    p = ttorch.nn.Parameter(ttorch.ones(2))
    opt = ttorch.optim.SGD([p], lr=0.1)
    s = ttorch.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="Attempted unscale_ but _scale is None"):
        s.unscale_(opt)
    s.scale((p * 2).sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
        s.unscale_(opt)
    s.update()
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
        s.update()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        s.step(opt, closure=lambda: 0.0)
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        s.load_state_dict({})
    h = ttorch.nn.Parameter(ttorch.ones(2, dtype=ttorch.float16))
    h.grad = ttorch.ones(2, dtype=ttorch.float16)
    s2 = ttorch.amp.GradScaler("cpu")
    s2.scale(ttorch.ones(()))
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        s2.unscale_(ttorch.optim.SGD([h], lr=1.0))


def test_state_dict_round_trip_and_new_scale():
    s = ttorch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=5)
    s.scale(ttorch.ones(()))
    s.update(new_scale=2.0)
    t = ttorch.amp.GradScaler("cpu")
    t.load_state_dict(s.state_dict())
    assert (
        t.state_dict()
        == s.state_dict()
        == {
            "scale": 2.0,
            "growth_factor": 2.0,
            "backoff_factor": 0.5,
            "growth_interval": 5,
            "_growth_tracker": 0,
        }
    )


def test_autocast_is_accepted_and_says_it_runs_in_full_precision():
    with ttorch.autocast("cpu", enabled=False):
        y = ttorch.ones(2, dtype=ttorch.float32) @ ttorch.ones(2)
    assert y.dtype == ttorch.float32
    with (
        pytest.warns(UserWarning, match="no lower-precision autocast"),
        ttorch.autocast("cpu", dtype=ttorch.float16),
    ):
        z = ttorch.ones(2) * 2
    assert z.dtype == ttorch.float32 and not ttorch.is_autocast_enabled()

    @ttorch.amp.autocast("cpu", enabled=False)
    def f(x):
        return x + 1

    np.testing.assert_array_equal(f(ttorch.zeros(1)).numpy(), [1.0])
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ttorch.autocast(0)


def test_the_deprecated_cuda_spellings_warn_as_pytorch():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = ttorch.cuda.amp.GradScaler()
        with ttorch.cuda.amp.autocast():
            pass
    texts = [str(w.message) for w in caught]
    assert texts == [
        "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
        "`torch.amp.GradScaler('cuda', args...)` instead.",
        "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
        "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
        "`torch.amp.autocast('cuda', args...)` instead.",
        "CUDA is not available or torch_xla is imported. Disabling autocast.",
    ]
    assert not scaler.is_enabled()
