"""Learning-rate schedulers: the same sequence as PyTorch's, state_dict round trips."""

import math

import pytest

import tapegrad as tg
from tapegrad import optim
from tapegrad.optim import lr_scheduler as S

CASES = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=6, eta_min=0.01)),
    ("LinearLR", dict(start_factor=0.25, end_factor=1.0, total_iters=4)),
    ("LinearLR", dict(start_factor=1.0, end_factor=0.1, total_iters=5)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (1 + e))),
]


def _lrs(opt_cls, sched_cls, kwargs, params, n=20):
    opt = opt_cls([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=0.1)
    sched = sched_cls(opt, **kwargs)
    out = [sched.get_last_lr()]
    for _ in range(n):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr())
    assert out[-1] == [g["lr"] for g in opt.param_groups]
    return out


@pytest.mark.parametrize(
    ("name", "kwargs"), CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)]
)
def test_matches_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    ours = _lrs(
        optim.SGD, getattr(S, name), kwargs, [tg.zeros(1, requires_grad=True) for _ in range(2)]
    )
    theirs = _lrs(
        torch.optim.SGD,
        getattr(torch.optim.lr_scheduler, name),
        kwargs,
        [torch.zeros(1, requires_grad=True) for _ in range(2)],
    )
    for a, b in zip(ours, theirs, strict=False):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)


def test_values_without_torch():
    p = tg.zeros(1, requires_grad=True)
    opt = optim.SGD([p], lr=1.0)
    s = S.CosineAnnealingLR(opt, T_max=4)
    lrs = [s.get_last_lr()[0]]
    for _ in range(4):
        s.step()
        lrs.append(s.get_last_lr()[0])
    assert lrs == pytest.approx([0.5 * (1 + math.cos(math.pi * e / 4)) for e in range(5)])
    opt = optim.SGD([p], lr=1.0)
    s = S.StepLR(opt, step_size=2, gamma=0.1)
    for _ in range(4):
        s.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01)


@pytest.mark.parametrize(
    ("name", "kwargs"), CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)]
)
def test_state_dict_round_trip(name, kwargs, tmp_path):
    def make():
        opt = optim.Adam([tg.zeros(1, requires_grad=True)], lr=0.1)
        return opt, getattr(S, name)(opt, **kwargs)

    opt, s = make()
    for _ in range(4):
        s.step()
    tg.save({"sched": s.state_dict(), "opt": opt.state_dict()}, tmp_path / "s.safetensors")
    ck = tg.load(tmp_path / "s.safetensors")
    opt2, s2 = make()
    opt2.load_state_dict(ck["opt"])
    s2.load_state_dict(ck["sched"])
    for _ in range(5):
        s.step()
        s2.step()
        assert s2.get_last_lr() == pytest.approx(s.get_last_lr(), rel=1e-12)


def test_errors():
    opt = optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(TypeError, match="needs a tg.optim Optimizer"):
        S.StepLR(object(), step_size=2)
    with pytest.raises(ValueError, match="step_size must be a positive integer"):
        S.StepLR(opt, step_size=0)
    with pytest.raises(KeyError, match="initial_lr"):
        S.ExponentialLR(opt, gamma=0.5, last_epoch=3)
    with pytest.raises(ValueError, match="expected 1 lr_lambdas"):
        S.LambdaLR(opt, [lambda e: 1.0, lambda e: 2.0])
    with pytest.raises(ValueError, match="unexpected keys"):
        S.StepLR(opt, step_size=2).load_state_dict({"bogus": 1})


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(patience=2, factor=0.5),
        dict(mode="max", patience=1, threshold=0.05, threshold_mode="abs", cooldown=2, min_lr=0.02),
    ],
)
def test_reduce_on_plateau_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    metrics = [1.0, 0.9, 0.95, 0.93, 0.92, 0.91, 0.97, 0.6, 0.61, 0.62, 0.63, 0.64, 0.65, 0.2]
    if kwargs.get("mode") == "max":
        metrics = [1 - m for m in metrics]
    opt = optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    ours = S.ReduceLROnPlateau(opt, **kwargs)
    topt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    theirs = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kwargs)
    seen = []
    for m in metrics:
        ours.step(m)
        theirs.step(m)
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)
        seen.append(ours.get_last_lr()[0])
    assert min(seen) < 0.1  # it did reduce
    sd = ours.state_dict()
    again = S.ReduceLROnPlateau(optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1), **kwargs)
    again.load_state_dict(sd)
    assert again.best == ours.best and again.num_bad_epochs == ours.num_bad_epochs


def test_reduce_on_plateau_errors():
    opt = optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="factor should be < 1.0"):
        S.ReduceLROnPlateau(opt, factor=2.0)
    with pytest.raises(ValueError, match="mode must be 'min' or 'max'"):
        S.ReduceLROnPlateau(opt, mode="up")
