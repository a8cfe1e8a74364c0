"""tg.optim.LBFGS follows torch.optim.LBFGS iterate by iterate (fixed step and strong Wolfe)."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.optim.lbfgs import cubic_minimizer, strong_wolfe


def _rosenbrock(x):
    return ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


def _closure(opt, x):
    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        return loss

    return closure


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
@pytest.mark.parametrize("history_size", [100, 3])
def test_iterates_match_pytorch_on_rosenbrock(line_search, history_size):
    torch = pytest.importorskip("torch")
    x0 = np.array([-1.5, 2.0, 0.5, -0.7])
    options = dict(
        lr=1.0 if line_search else 0.05,
        max_iter=7,
        history_size=history_size,
        line_search_fn=line_search,
    )
    x, xt = tg.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    opt, opt_t = tg.optim.LBFGS([x], **options), torch.optim.LBFGS([xt], **options)
    for _ in range(6):
        loss = opt.step(_closure(opt, x))
        loss_t = opt_t.step(_closure(opt_t, xt))
        np.testing.assert_allclose(x.detach().numpy(), xt.detach().numpy(), atol=1e-6, rtol=0)
        np.testing.assert_allclose(loss.item(), loss_t.item(), rtol=1e-6)
    assert opt.state[x]["func_evals"] == opt_t.state[xt]["func_evals"]
    assert opt.state[x]["n_iter"] == opt_t.state[xt]["n_iter"]


def test_strong_wolfe_reaches_the_minimum():
    x = tg.tensor([-1.2, 1.0], dtype=tg.float64, requires_grad=True)
    opt = tg.optim.LBFGS(
        [x],
        max_iter=200,
        line_search_fn="strong_wolfe",
        tolerance_grad=1e-12,
        tolerance_change=1e-14,
    )
    opt.step(_closure(opt, x))
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-6)


def test_several_parameters_form_one_vector():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 3)), rng.standard_normal(8)

    def fit(lib, opt_cls):
        w = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        c = lib.zeros(1, dtype=lib.float64, requires_grad=True)
        opt = opt_cls([w, c], line_search_fn="strong_wolfe")
        A, B = lib.tensor(a), lib.tensor(b)

        def closure():
            opt.zero_grad()
            loss = ((A @ w + c - B) ** 2).mean() + (w**4).sum()
            loss.backward()
            return loss

        for _ in range(3):
            opt.step(closure)
        return w.detach().numpy(), c.detach().numpy()

    ours, theirs = fit(tg, tg.optim.LBFGS), fit(torch, torch.optim.LBFGS)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, t, atol=1e-6)


def test_a_converged_start_returns_at_once():
    x = tg.tensor([1.0, 1.0], dtype=tg.float64, requires_grad=True)
    opt = tg.optim.LBFGS([x])
    calls = []

    def closure():
        calls.append(1)
        return _closure(opt, x)()

    assert opt.step(closure).item() == 0.0 and len(calls) == 1
    assert x.tolist() == [1.0, 1.0]


def test_arguments_are_checked():
    x = tg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="line_search_fn"):
        tg.optim.LBFGS([x], line_search_fn="armijo")
    with pytest.raises(ValueError, match="parameter groups"):
        tg.optim.LBFGS([{"params": [x]}, {"params": [tg.zeros(1, requires_grad=True)]}])
    with pytest.raises(RuntimeError, match="needs a closure"):
        tg.optim.LBFGS([x]).step(None)


def test_cubic_minimizer_finds_the_minimum_of_a_cubic():
    f = lambda t: (t - 0.3) ** 2 * (t + 2)  # noqa: E731  (local minimum at t = 0.3)
    df = lambda t: 2 * (t - 0.3) * (t + 2) + (t - 0.3) ** 2  # noqa: E731
    assert cubic_minimizer(0.0, f(0.0), df(0.0), 1.0, f(1.0), df(1.0)) == pytest.approx(0.3)
    assert cubic_minimizer(0.0, 0.0, -1.0, 1.0, 0.0, -1.0, bounds=(0.4, 0.6)) == 0.4  # clipped
    # no real minimizer (the discriminant is negative): the middle of the bounds
    assert cubic_minimizer(0.0, 0.0, 1.0, 1.0, 2 / 3, 1.0, bounds=(0.2, 0.6)) == pytest.approx(0.4)


def test_strong_wolfe_step_satisfies_the_conditions():
    # phi(t) = (t - 2)^2 along d = 1 from x = 0
    def phi(x, t, d):
        pos = x + t * d
        return float((pos[0] - 2) ** 2), np.array([2 * (pos[0] - 2)])

    x, d = np.zeros(1), np.ones(1)
    f0, g0 = phi(x, 0.0, d)
    gtd = float(g0 @ d)
    f, g, t, _ = strong_wolfe(phi, x, 0.1, d, f0, g0, gtd)
    assert f <= f0 + 1e-4 * t * gtd and abs(float(g @ d)) <= -0.9 * gtd


def test_state_dict_round_trip_continues_the_same_iterates():
    def run(resume):
        x = tg.tensor([-1.5, 2.0], dtype=tg.float64, requires_grad=True)
        opt = tg.optim.LBFGS([x], max_iter=5, line_search_fn="strong_wolfe")
        opt.step(_closure(opt, x))
        if resume:
            saved = opt.state_dict()
            opt = tg.optim.LBFGS([x], max_iter=5, line_search_fn="strong_wolfe")
            opt.load_state_dict(saved)
        opt.step(_closure(opt, x))
        return x.detach().numpy()

    np.testing.assert_array_equal(run(resume=True), run(resume=False))
