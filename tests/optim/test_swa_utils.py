"""optim.swa_utils: AveragedModel, SWALR and update_bn against PyTorch and by definition."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.optim import swa_utils as S


def _net():
    net = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.BatchNorm1d(4), tg.nn.Linear(4, 1))
    return net.double()


def _train(net, opt, x, steps):
    for _ in range(steps):
        opt.zero_grad()
        net(x).square().mean().backward()
        opt.step()


def test_averaged_model_is_the_mean_of_the_weights_it_saw():
    rng = np.random.default_rng(0)
    net = _net()
    swa = S.AveragedModel(net)
    opt = tg.optim.SGD(net.parameters(), lr=0.1)
    x = tg.tensor(rng.standard_normal((8, 3)))
    seen = []
    for _ in range(4):
        _train(net, opt, x, 2)
        swa.update_parameters(net)
        seen.append([p.detach().numpy().copy() for p in net.parameters()])
    assert int(swa.n_averaged) == 4
    for i, p in enumerate(swa.module.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), np.mean([s[i] for s in seen], 0), 1e-12)
    # buffers follow the latest model without use_buffers
    np.testing.assert_array_equal(swa.module[1].running_mean.numpy(), net[1].running_mean.numpy())
    np.testing.assert_allclose(swa(x).detach().numpy(), swa.module(x).detach().numpy())


def test_ema_multi_avg_fn_and_use_buffers():
    rng = np.random.default_rng(1)
    net = _net()
    ema = S.AveragedModel(net, multi_avg_fn=S.get_ema_multi_avg_fn(0.9), use_buffers=True)
    ema_single = S.AveragedModel(net, avg_fn=S.get_ema_avg_fn(0.9), use_buffers=True)
    opt = tg.optim.SGD(net.parameters(), lr=0.1)
    x = tg.tensor(rng.standard_normal((8, 3)))
    want = None
    for _ in range(3):
        _train(net, opt, x, 1)
        ema.update_parameters(net)
        ema_single.update_parameters(net)
        now = [t.detach().numpy().astype(float) for t in (*net.parameters(), *net.buffers())]
        want = now if want is None else [0.9 * w + 0.1 * n for w, n in zip(want, now)]
    got = [t.detach().numpy() for t in (*ema.module.parameters(), *ema.module.buffers())]
    for g, w in zip(got, want):
        if g.dtype.kind == "f":  # num_batches_tracked: an integer average truncates (as torch)
            np.testing.assert_allclose(g, w, rtol=1e-12)
    for a, b in zip(ema.module.parameters(), ema_single.module.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    ours = _net()
    theirs = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 1)
    ).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = rng.standard_normal((8, 3))
    swa_g, swa_t = S.AveragedModel(ours), torch.optim.swa_utils.AveragedModel(theirs)
    opt_g = tg.optim.SGD(ours.parameters(), lr=0.5)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.5)
    sched_g = S.SWALR(opt_g, swa_lr=0.05, anneal_epochs=3)
    sched_t = torch.optim.swa_utils.SWALR(opt_t, swa_lr=0.05, anneal_epochs=3)
    for _ in range(5):
        _train(ours, opt_g, tg.tensor(x), 1)
        opt_t.zero_grad()
        theirs(torch.tensor(x)).square().mean().backward()
        opt_t.step()
        swa_g.update_parameters(ours)
        swa_t.update_parameters(theirs)
        sched_g.step()
        sched_t.step()
        assert sched_g.get_last_lr() == pytest.approx(sched_t.get_last_lr(), rel=1e-12)
    loader = [tg.tensor(rng.standard_normal((4, 3))) for _ in range(3)]
    S.update_bn(loader, swa_g)
    torch.optim.swa_utils.update_bn([torch.tensor(b.numpy()) for b in loader], swa_t)
    got, want = swa_g.state_dict(), swa_t.state_dict()
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-10, atol=1e-12)


def test_swalr_state_dict_round_trip_and_errors():
    opt = tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=1.0)
    sched = S.SWALR(opt, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    sched.step()
    state = sched.state_dict()
    other = S.SWALR(
        tg.optim.SGD([tg.zeros(1, requires_grad=True)], lr=1.0), swa_lr=0.1, anneal_epochs=4
    )
    other.load_state_dict(state)
    assert other.anneal_func(0.5) == 0.5  # linear again
    with pytest.raises(ValueError, match="anneal_strategy must be 'cos' or 'linear'"):
        S.SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be an int >= 0"):
        S.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr has 2 values"):
        S.SWALR(opt, swa_lr=[0.1, 0.2])
    with pytest.raises(ValueError, match="avg_fn or multi_avg_fn, not both"):
        S.AveragedModel(_net(), avg_fn=S.get_swa_avg_fn(), multi_avg_fn=S.get_swa_multi_avg_fn())
    with pytest.raises(TypeError, match="expected an nn.Module"):
        S.AveragedModel(3)
