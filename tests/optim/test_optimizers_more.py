"""Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD: 20 steps against PyTorch (float64, every
option, param groups, LR schedulers), state_dict round trips, known first steps, errors."""

import numpy as np
import pytest
from test_optimizers import _init, _np_grad, _run_tapegrad, _run_torch

import tapegrad as tg
from tapegrad import optim

NAMES = ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"]

CASES = [
    ("Adadelta", {}),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Adamax", {}),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-3, weight_decay=0.1)),
    ("Adamax", dict(maximize=True)),
    ("NAdam", {}),
    ("NAdam", dict(lr=0.05, weight_decay=0.1)),
    (
        "NAdam",
        dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01),
    ),
    ("NAdam", dict(lr=0.05, betas=(0.8, 0.95), maximize=True)),
    ("RAdam", {}),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, betas=(0.9, 0.9))),  # rectified from step 6
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.8, 0.95))),
    ("RAdam", dict(maximize=True, betas=(0.5, 0.8))),
    ("Rprop", {}),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(maximize=True)),
    ("ASGD", {}),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
    ("ASGD", dict(maximize=True, t0=3)),
]


@pytest.fixture
def torch64():
    """torch with float64 scalars: its optimizers keep step counts, NAdam's mu_product and
    ASGD's eta and mu as tensors of the default dtype, float32 unless told otherwise."""
    torch = pytest.importorskip("torch")
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(before)


@pytest.mark.parametrize(
    ("name", "kwargs"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
)
def test_matches_torch_over_20_steps(torch64, name, kwargs, rng):
    init = _init(rng)
    ours, _ = _run_tapegrad(getattr(optim, name), kwargs, init, steps=20)
    theirs = _run_torch(torch64, getattr(torch64.optim, name), kwargs, init, steps=20)
    for a, b, start in zip(ours, theirs, init, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        assert not np.allclose(a, start)  # it really moved


@pytest.mark.parametrize("name", NAMES)
def test_float32_matches_torch(name, rng):
    torch = pytest.importorskip("torch")
    init = _init(rng, np.float32)
    ours, _ = _run_tapegrad(getattr(optim, name), {}, init, steps=20)
    theirs = _run_torch(torch, getattr(torch.optim, name), {}, init, steps=20)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


GROUPS = {
    "Adadelta": ({"lr": 0.5}, {"rho": 0.5, "weight_decay": 0.1}),
    "Adamax": ({"lr": 0.1}, {"betas": (0.5, 0.9)}),
    "NAdam": ({"lr": 0.1, "decoupled_weight_decay": True, "weight_decay": 0.1}, {"eps": 1e-3}),
    "RAdam": ({"lr": 0.1}, {"betas": (0.8, 0.9), "weight_decay": 0.2}),
    "Rprop": ({"lr": 0.1}, {"etas": (0.4, 1.1)}),
    "ASGD": ({"lr": 0.1, "t0": 2}, {"lambd": 0.1}),
}


@pytest.mark.parametrize("name", NAMES)
def test_param_groups_with_their_own_options_match_torch(torch64, name, rng):
    init = _init(rng)
    first, second = GROUPS[name]
    groups = [((0, 2), first), ((1,), second)]
    ours, _ = _run_tapegrad(getattr(optim, name), {}, init, steps=20, groups=groups)
    theirs = _run_torch(torch64, getattr(torch64.optim, name), {}, init, steps=20, groups=groups)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _steps(opt, params, n, sched=None):
    for _ in range(n):
        opt.zero_grad()
        for k, p in enumerate(params):
            p.grad = tg.tensor(_np_grad(p.detach().numpy(), k))
        opt.step()
        if sched is not None:
            sched.step()


@pytest.mark.parametrize("name", NAMES)
def test_lr_scheduler_drives_the_new_optimizers_as_torch(torch64, name, rng):
    init = _init(rng)
    params = [tg.tensor(a.copy(), requires_grad=True) for a in init]
    opt = getattr(optim, name)(params, lr=0.05)
    sched = optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    _steps(opt, params, 12, sched)
    tparams = [torch64.tensor(a.copy(), requires_grad=True) for a in init]
    topt = getattr(torch64.optim, name)(tparams, lr=0.05)
    tsched = torch64.optim.lr_scheduler.StepLR(topt, step_size=4, gamma=0.5)
    for _ in range(12):
        topt.zero_grad()
        for k, p in enumerate(tparams):
            p.grad = torch64.from_numpy(_np_grad(p.detach().numpy(), k))
        topt.step()
        tsched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"])
    for p, q in zip(params, tparams, strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_continues_identically(name, rng, tmp_path):
    cls = getattr(optim, name)
    kwargs = {"lr": 0.05} if name != "ASGD" else {"lr": 0.05, "t0": 3}
    init = _init(rng)
    straight, _ = _run_tapegrad(cls, kwargs, init, steps=20)
    mid, opt = _run_tapegrad(cls, kwargs, init, steps=10)
    tg.save(opt.state_dict(), tmp_path / "opt.safetensors")
    params = [tg.tensor(a, requires_grad=True) for a in mid]
    opt2 = cls(params, **{**kwargs, "lr": 0.5})
    opt2.load_state_dict(tg.load(tmp_path / "opt.safetensors"))
    assert opt2.param_groups[0]["lr"] == 0.05
    assert opt2.state[params[0]]["step"] == 10
    _steps(opt2, params, 10)
    for a, p in zip(straight, params, strict=True):
        np.testing.assert_allclose(p.detach().numpy(), a, rtol=1e-12)


def test_known_first_steps():
    g = np.array([0.5, -2.0, 0.0])

    def first(cls, **kwargs):
        p = tg.tensor([1.0, 1.0, 1.0], dtype=tg.float64, requires_grad=True)
        opt = cls([p], **kwargs)
        p.grad = tg.tensor(g)
        opt.step()
        return p.detach().numpy() - 1.0, opt.state[p]

    step, st = first(optim.Rprop, lr=0.1)  # the sign of g times lr
    np.testing.assert_allclose(step, [-0.1, 0.1, 0.0])
    np.testing.assert_allclose(st["step_size"], [0.1, 0.1, 0.1])
    step, _ = first(optim.Adamax, lr=0.1, eps=1e-12)  # m / (1 - b1) = g, u = |g| + eps
    np.testing.assert_allclose(step, [-0.1, 0.1, 0.0])
    step, _ = first(optim.RAdam, lr=0.1)  # rho_1 = 1 <= 5: the bias-corrected momentum
    np.testing.assert_allclose(step, -0.1 * g)
    step, st = first(optim.ASGD, lr=0.1, lambd=0.0)  # plain SGD; ax copies p until t0
    np.testing.assert_allclose(step, -0.1 * g)
    np.testing.assert_allclose(st["ax"], 1.0 - 0.1 * g)
    # Adadelta: sqrt(eps) / sqrt(0.1 g^2 + eps) g
    step, _ = first(optim.Adadelta, eps=1e-6)
    np.testing.assert_allclose(step, -np.sqrt(1e-6) / np.sqrt(0.1 * g * g + 1e-6) * g)


def test_rprop_skips_the_step_after_a_sign_flip():
    p = tg.tensor([0.0], dtype=tg.float64, requires_grad=True)
    opt = optim.Rprop([p], lr=0.1, etas=(0.5, 2.0))
    moves = []
    for grad in [1.0, 1.0, -1.0, -1.0]:
        before = p.item()
        p.grad = tg.tensor([grad], dtype=tg.float64)
        opt.step()
        moves.append(p.item() - before)
    # grows to 0.2, then the flip halves the size to 0.1 and skips; then steps by 0.1
    np.testing.assert_allclose(moves, [-0.1, -0.2, 0.0, 0.1])


def test_defaults_repr_and_facade():
    from tapegrad.compat import torch as ttorch

    w = tg.tensor([1.0], requires_grad=True)
    assert optim.NAdam([w]).defaults["momentum_decay"] == 0.004
    assert optim.Rprop([w]).defaults["step_sizes"] == (1e-6, 50)
    assert optim.ASGD([w]).defaults["t0"] == 1e6
    assert "decoupled_weight_decay: False" in repr(optim.RAdam([w]))
    for name in NAMES:
        assert getattr(ttorch.optim, name) is getattr(optim, name)


@pytest.mark.parametrize(
    ("name", "kwargs", "match"),
    [
        ("Adadelta", {"rho": 1.5}, "Invalid rho value: 1.5"),
        ("Adadelta", {"eps": -1.0}, "Invalid epsilon value"),
        ("Adadelta", {"lr": -1.0}, "Invalid learning rate"),
        ("Adamax", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0"),
        ("Adamax", {"weight_decay": -0.1}, "Invalid weight_decay value"),
        ("NAdam", {"momentum_decay": -1.0}, "Invalid momentum_decay value"),
        ("NAdam", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1"),
        ("RAdam", {"eps": -1e-8}, "Invalid epsilon value"),
        ("Rprop", {"etas": (1.5, 1.2)}, "Invalid eta values: 1.5, 1.2"),
        ("Rprop", {"step_sizes": (1.0, 0.1)}, "Invalid step_sizes"),
        ("ASGD", {"weight_decay": -1.0}, "Invalid weight_decay value"),
    ],
)
def test_bad_arguments_raise_clear_errors(name, kwargs, match):
    w = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match=match):
        getattr(optim, name)([w], **kwargs)
    opt = getattr(optim, name)([w])
    with pytest.raises(ValueError, match=match):
        opt.add_param_group({"params": [tg.tensor([2.0], requires_grad=True)], **kwargs})
