"""Optimizers: the same 10 steps as PyTorch (to 1e-6), state_dict round trips, errors."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import optim

SHAPES = [(4, 3), (3,), (2, 2, 2)]


def _target(shape, k):
    return np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape) * (k + 1)


def _np_grad(p, k):
    """Gradient of sum(0.5 * (p - t)^2 * (1 + t^2) + 0.1 * sin(3p)): a curved, non-separable-ish
    loss whose gradient every framework computes the same way."""
    t = _target(p.shape, k)
    return ((p - t) * (1 + t * t) + 0.3 * np.cos(3 * p)).astype(p.dtype)  # a grad has p's dtype


def _init(rng, dtype=np.float64):
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _run_tapegrad(cls, kwargs, init, steps=10, groups=None):
    params = [tg.tensor(a.copy(), requires_grad=True) for a in init]
    arg = (
        params
        if groups is None
        else [dict(g, params=[params[i] for i in idx]) for idx, g in groups]
    )
    opt = cls(arg, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        for k, p in enumerate(params):
            p.grad = tg.tensor(_np_grad(p.detach().numpy(), k))
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


def _run_torch(torch, cls, kwargs, init, steps=10, groups=None):
    params = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    arg = (
        params
        if groups is None
        else [dict(g, params=[params[i] for i in idx]) for idx, g in groups]
    )
    opt = cls(arg, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        loss = 0
        for k, p in enumerate(params):
            t = torch.tensor(_target(tuple(p.shape), k))
            loss = loss + (0.5 * (p - t) ** 2 * (1 + t * t) + 0.1 * torch.sin(3 * p)).sum()
        loss.backward()
        opt.step()
    return [p.detach().numpy() for p in params]


CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.05, maximize=True, eps=1e-6)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.2, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.05)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
]


@pytest.mark.parametrize(
    ("name", "kwargs"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
)
def test_matches_torch_over_10_steps(name, kwargs, rng):
    torch = pytest.importorskip("torch")
    init = _init(rng)
    ours, _ = _run_tapegrad(getattr(optim, name), kwargs, init)
    theirs = _run_torch(torch, getattr(torch.optim, name), kwargs, init)
    for a, b in zip(ours, theirs, strict=False):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        assert not np.allclose(a, init[0].ravel()[0])  # it really moved


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_float32_matches_torch(name, rng):
    torch = pytest.importorskip("torch")
    init = _init(rng, np.float32)
    kwargs = dict(lr=0.01, momentum=0.9) if name != "Adam" else dict(lr=0.01)
    ours, _ = _run_tapegrad(getattr(optim, name), kwargs, init)
    theirs = _run_torch(torch, getattr(torch.optim, name), kwargs, init)
    for a, b in zip(ours, theirs, strict=False):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_param_groups_with_their_own_options_match_torch(rng):
    torch = pytest.importorskip("torch")
    init = _init(rng)
    groups = [((0, 2), dict(lr=0.1)), ((1,), dict(momentum=0.5))]
    ours, _ = _run_tapegrad(optim.SGD, dict(lr=0.01, momentum=0.9), init, groups=groups)
    theirs = _run_torch(torch, torch.optim.SGD, dict(lr=0.01, momentum=0.9), init, groups=groups)
    for a, b in zip(ours, theirs, strict=False):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_update_is_in_place_and_bumps_the_version():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    storage = w._data
    v0 = w._version
    opt = optim.SGD([w], lr=0.5)
    w.grad = tg.tensor([1.0, 1.0])
    opt.step()
    assert w._data is storage
    np.testing.assert_allclose(w.detach().numpy(), [0.5, 1.5])
    assert w._version == v0 + 1
    assert w.grad_fn is None and w.requires_grad


def test_parameters_without_grad_are_skipped():
    a = tg.tensor([1.0], requires_grad=True)
    b = tg.tensor([1.0], requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = tg.tensor([1.0])
    opt.step()
    assert b.item() == 1.0 and a.item() < 1.0
    assert b not in opt.state and a in opt.state


def test_zero_grad_set_to_none_and_in_place():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    w.grad = tg.tensor([3.0, 4.0])
    g = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is g and w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_step_with_closure_returns_the_loss():
    w = tg.tensor([2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = w * w
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 4.0
    assert w.item() == pytest.approx(1.0)


def test_add_param_group_uses_defaults():
    a = tg.tensor([1.0], requires_grad=True)
    b = tg.tensor([1.0], requires_grad=True)
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": [b], "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9
    assert "Parameter Group 1" in repr(opt)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_state_dict_round_trip_continues_identically(name, rng):
    cls = getattr(optim, name)
    kwargs = dict(lr=0.05, momentum=0.9) if name in ("SGD", "RMSprop") else dict(lr=0.05)
    init = _init(rng)
    # run 10 steps straight
    straight, _ = _run_tapegrad(cls, kwargs, init, steps=10)
    # run 5, checkpoint through tg.save / tg.load, rebuild, run 5 more
    mid, opt = _run_tapegrad(cls, kwargs, init, steps=5)
    sd = opt.state_dict()
    params = [tg.tensor(a, requires_grad=True) for a in mid]
    opt2 = cls(params, **kwargs)
    opt2.load_state_dict(sd)
    for _ in range(5):
        for k, p in enumerate(params):
            p.grad = tg.tensor(_np_grad(p.detach().numpy(), k))
        opt2.step()
    for a, p in zip(straight, params, strict=False):
        np.testing.assert_allclose(p.detach().numpy(), a, rtol=1e-12)


def test_state_dict_round_trip_through_a_file(tmp_path, rng):
    init = _init(rng)
    _, opt = _run_tapegrad(optim.Adam, dict(lr=0.01, betas=(0.8, 0.9)), init, steps=3)
    tg.save(opt.state_dict(), tmp_path / "opt.safetensors")
    sd = tg.load(tmp_path / "opt.safetensors")
    params = [tg.tensor(a, requires_grad=True) for a in init]
    opt2 = optim.Adam(params, lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["betas"] == (0.8, 0.9) and opt2.param_groups[0]["lr"] == 0.01
    for p, q in zip(opt.param_groups[0]["params"], params, strict=False):
        assert opt2.state[q]["step"] == 3
        np.testing.assert_array_equal(opt2.state[q]["exp_avg"], opt.state[p]["exp_avg"])
        assert opt2.state[q]["exp_avg"] is not opt.state[p]["exp_avg"]


def test_load_state_dict_mismatch_changes_nothing(rng):
    init = _init(rng)
    _, opt = _run_tapegrad(optim.Adam, dict(lr=0.01), init, steps=2)
    sd = opt.state_dict()
    other = optim.Adam([tg.tensor(np.zeros(5), requires_grad=True)] * 1, lr=0.3)
    with pytest.raises(ValueError, match="doesn't match the optimizer's group"):
        other.load_state_dict(sd)
    wrong = [tg.tensor(np.zeros((7,)), requires_grad=True) for _ in SHAPES]
    opt3 = optim.Adam(wrong, lr=0.3)
    with pytest.raises(ValueError, match=r"has shape \(4, 3\) but the parameter has shape \(7,\)"):
        opt3.load_state_dict(sd)
    assert opt3.state == {} and opt3.param_groups[0]["lr"] == 0.3
    with pytest.raises(ValueError, match="2 parameter groups but the optimizer has 1"):
        opt3.load_state_dict({"state": {}, "param_groups": [{"params": []}] * 2})
    with pytest.raises(ValueError, match="expects the dict returned by"):
        opt3.load_state_dict({"weights": 1})


def test_bad_arguments_raise_clear_errors():
    w = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.SGD([w], lr=-0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(ValueError, match="appears twice"):
        optim.SGD([w, w], lr=0.1)
    y = w * 2
    with pytest.raises(ValueError, match="non-leaf Tensor"):
        optim.SGD([y], lr=0.1)
    with pytest.raises(TypeError, match="single Tensor"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(TypeError, match="parameter 0 is a float"):
        optim.SGD([1.0], lr=0.1)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0"):
        optim.Adam([w], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="Invalid momentum"):
        optim.RMSprop([w], momentum=-1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.SGD([w], lr=0.1).add_param_group({"params": [tg.tensor([1.0])], "lr": -1})


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)),
        ("Adam", dict(lr=0.01, amsgrad=True)),
        ("AdamW", dict(lr=0.01)),
        ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
        ("Adagrad", dict(lr=0.1)),
    ],
)
def test_training_the_same_model_matches_torch(name, kwargs, rng):
    """10 steps on an MLP with identical weights and data: same parameters to 1e-6."""
    torch = pytest.importorskip("torch")
    nn = tg.nn
    if not hasattr(nn, "Linear") or not hasattr(nn.functional, "cross_entropy"):
        pytest.skip("tg.nn.Linear / cross_entropy not available yet")
    x = rng.standard_normal((16, 5))
    y = rng.integers(0, 3, size=16)
    ours = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)).to(dtype=tg.float64)
    theirs = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    theirs = theirs.double()
    with torch.no_grad():
        for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
            q.copy_(torch.tensor(p.detach().numpy()))
    opt = getattr(optim, name)(ours.parameters(), **kwargs)
    topt = getattr(torch.optim, name)(theirs.parameters(), **kwargs)
    for _ in range(10):
        opt.zero_grad()
        tg.nn.functional.cross_entropy(ours(tg.tensor(x)), tg.tensor(y)).backward()
        opt.step()
        topt.zero_grad()
        torch.nn.functional.cross_entropy(theirs(torch.tensor(x)), torch.tensor(y)).backward()
        topt.step()
    for (k, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        np.testing.assert_allclose(
            p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-6, err_msg=k
        )


def test_bad_gradient_shape_updates_nothing():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0], requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1, momentum=0.9)
    a.grad = tg.tensor([1.0, 1.0])
    b._grad = tg.tensor([1.0, 1.0])  # bypasses the grad setter's shape check
    with pytest.raises(RuntimeError, match=r"shape \(2,\) but its parameter has shape \(1,\)"):
        opt.step()
    assert a.tolist() == [1.0, 2.0] and opt.state == {}
