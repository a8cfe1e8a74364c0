"""The cyclic and combined schedulers and the smaller ones (ConstantLR, PolynomialLR,
MultiplicativeLR): the same learning rates and momenta as PyTorch's, step by step."""

from __future__ import annotations

import math

import pytest

import tapegrad as tg
from tapegrad.optim import lr_scheduler as S


def _run(lib, opt_name, opt_kwargs, build, n=40, epochs=None):
    params = [lib.zeros(1, requires_grad=True) for _ in range(2)]
    opt = getattr(lib.optim, opt_name)(
        [{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=0.1, **opt_kwargs
    )
    sched = build(lib.optim.lr_scheduler, opt)
    key = "betas" if opt_name == "Adam" else "momentum"
    out = [(sched.get_last_lr(), [g.get(key) for g in opt.param_groups])]
    for i in range(n):
        opt.step()
        if epochs is None:
            sched.step()
        else:
            sched.step(epochs[i])
        out.append((sched.get_last_lr(), [g.get(key) for g in opt.param_groups]))
        assert sched.get_last_lr() == [g["lr"] for g in opt.param_groups]
    return out


CASES = {
    "ConstantLR": ("SGD", {}, lambda L, o: L.ConstantLR(o, factor=0.25, total_iters=4)),
    "PolynomialLR": ("SGD", {}, lambda L, o: L.PolynomialLR(o, total_iters=7, power=2.0)),
    "MultiplicativeLR": ("SGD", {}, lambda L, o: L.MultiplicativeLR(o, lambda e: 0.9 + 0.001 * e)),
    "warm restarts": (
        "SGD",
        {},
        lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.001),
    ),
    "warm restarts T_mult 1": (
        "SGD",
        {},
        lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=7),
    ),
    "one cycle SGD": (
        "SGD",
        {"momentum": 0.9},
        lambda L, o: L.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=40),
    ),
    "one cycle Adam linear three phase": (
        "Adam",
        {},
        lambda L, o: L.OneCycleLR(
            o, max_lr=0.5, epochs=4, steps_per_epoch=10, anneal_strategy="linear", three_phase=True
        ),
    ),
    "one cycle no momentum": (
        "SGD",
        {},
        lambda L, o: L.OneCycleLR(
            o, max_lr=1.0, total_steps=41, cycle_momentum=False, pct_start=0.5
        ),
    ),
    "cyclic triangular": (
        "SGD",
        {"momentum": 0.9},
        lambda L, o: L.CyclicLR(
            o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4, step_size_down=6
        ),
    ),
    "cyclic triangular2": (
        "SGD",
        {"momentum": 0.9},
        lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2"),
    ),
    "cyclic exp_range Adam": (
        "Adam",
        {},
        lambda L, o: L.CyclicLR(
            o, base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.97
        ),
    ),
    "sequential warm-up then cosine": (
        "SGD",
        {},
        lambda L, o: L.SequentialLR(
            o,
            [L.LinearLR(o, start_factor=0.1, total_iters=5), L.CosineAnnealingLR(o, T_max=20)],
            milestones=[5],
        ),
    ),
    "sequential three": (
        "SGD",
        {},
        lambda L, o: L.SequentialLR(
            o,
            [
                L.ConstantLR(o, factor=0.5, total_iters=3),
                L.ExponentialLR(o, gamma=0.9),
                L.StepLR(o, 4),
            ],
            milestones=[6, 15],
        ),
    ),
    "chained": (
        "SGD",
        {},
        lambda L, o: L.ChainedScheduler(
            [L.ConstantLR(o, factor=0.5, total_iters=3), L.ExponentialLR(o, gamma=0.9)]
        ),
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_matches_torch(case):
    torch = pytest.importorskip("torch")
    ours, theirs = _run(tg, *case), _run(torch, *case)
    for (lr_a, m_a), (lr_b, m_b) in zip(ours, theirs, strict=True):
        assert lr_a == pytest.approx(lr_b, rel=1e-12, abs=1e-15)
        if m_b[0] is None:
            assert m_a == m_b
        else:  # momenta, or Adam's (beta1, beta2) pairs: compared flat
            flat_a = [v for m in m_a for v in (m if isinstance(m, tuple) else (m,))]
            flat_b = [v for m in m_b for v in (m if isinstance(m, tuple) else (m,))]
            assert flat_a == pytest.approx(flat_b, rel=1e-12)


def test_warm_restarts_take_fractional_epochs_like_torch():
    torch = pytest.importorskip("torch")
    epochs = [i / 4 for i in range(1, 41)]
    case = CASES["warm restarts"]
    ours, theirs = _run(tg, *case, epochs=epochs), _run(torch, *case, epochs=epochs)
    for (a, _), (b, _) in zip(ours, theirs, strict=True):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)


def test_values_without_torch():
    opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
    sched = S.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.5, anneal_strategy="linear")
    lrs = [sched.get_last_lr()[0]]
    for _ in range(9):
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs[0] == pytest.approx(0.04) and lrs[4] == pytest.approx(1.0)
    assert lrs[9] == pytest.approx(0.04 / 1e4)
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)
    opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=1.0)
    sched = S.CosineAnnealingWarmRestarts(opt, T_0=4)
    lrs = [sched.get_last_lr()[0]]
    for _ in range(5):
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == pytest.approx([(1 + math.cos(math.pi * (e % 4) / 4)) / 2 for e in range(6)])


def test_misuse_is_named():
    opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="OneCycleLR: you must define either total_steps"):
        S.OneCycleLR(opt, max_lr=1.0)
    sched = S.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="OneCycleLR: tried to step 3 times"):
        sched.step()
    plain = tg.optim.Adagrad([tg.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="CyclicLR: optimizer must support momentum"):
        S.CyclicLR(plain, base_lr=0.01, max_lr=0.1)
    with pytest.raises(ValueError, match="SequentialLR: expected 1 milestones"):
        S.SequentialLR(opt, [S.StepLR(opt, 2), S.StepLR(opt, 3)], milestones=[])
    with pytest.raises(
        ValueError, match="CosineAnnealingWarmRestarts: expected a positive integer T_0"
    ):
        S.CosineAnnealingWarmRestarts(opt, T_0=0)


def test_state_dicts_round_trip():
    def build():
        opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        return opt, S.SequentialLR(
            opt, [S.LinearLR(opt, start_factor=0.1, total_iters=3), S.ExponentialLR(opt, 0.8)], [3]
        )

    opt, sched = build()
    for _ in range(5):
        sched.step()
    opt2, sched2 = build()
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(sched.state_dict())
    for _ in range(3):
        sched.step()
        sched2.step()
    assert sched2.get_last_lr() == pytest.approx(sched.get_last_lr())
