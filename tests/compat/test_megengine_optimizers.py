"""`mge.optimizer.Adagrad` and `Adadelta` make MegEngine's documented updates (Adagrad's
epsilon inside the square root, unlike PyTorch's), in float64, with the learning rate
read from `param_groups` at every step."""

import numpy as np
import pytest

import tapegrad.compat.megengine as mge
from tapegrad.compat.megengine.autodiff import GradManager

W0 = np.array([0.5, -1.0, 2.0])
COEF = [np.array([4.0, -2.0, 0.5]), np.array([-3.0, 1.0, 6.0]), np.array([1.0, 8.0, -7.0])]


def _run(make_opt):
    w = mge.Parameter(W0.copy(), dtype="float64")
    opt = make_opt([w])
    gm = GradManager().attach([w])
    for k, c in enumerate(COEF):
        if k == 1:
            opt.param_groups[0]["lr"] *= 0.5
        with gm:
            gm.backward((w * mge.tensor(c, dtype="float64")).sum())
        opt.step().clear_grad()
    return w.numpy()


def test_adagrad_epsilon_inside_the_root_and_lr_decay():
    lr, decay, eps, wd = 0.1, 0.3, 1e-2, 0.05
    got = _run(
        lambda ps: mge.optimizer.Adagrad(ps, lr=lr, lr_decay=decay, eps=eps, weight_decay=wd)
    )
    w, s = W0.copy(), np.zeros(3)
    for k, c in enumerate(COEF, 1):
        g = c + wd * w
        s += g * g
        rate = (lr if k == 1 else lr * 0.5) / (1 + (k - 1) * decay)
        w = w - rate * g / np.sqrt(s + eps)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_adadelta():
    lr, rho, eps, wd = 1.0, 0.8, 1e-3, 0.1
    got = _run(lambda ps: mge.optimizer.Adadelta(ps, lr=lr, rho=rho, eps=eps, weight_decay=wd))
    w, s, a = W0.copy(), np.zeros(3), np.zeros(3)
    for k, c in enumerate(COEF, 1):
        g = c + wd * w
        s = rho * s + (1 - rho) * g * g
        d = g * np.sqrt(a + eps) / np.sqrt(s + eps)
        a = rho * a + (1 - rho) * d * d
        w = w - (lr if k == 1 else lr * 0.5) * d
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_bad_options_are_refused():
    w = mge.Parameter(W0.copy())
    with pytest.raises(ValueError, match="rho must be in"):
        mge.optimizer.Adadelta([w], rho=1.5)
    with pytest.raises(ValueError, match="lr_decay"):
        mge.optimizer.Adagrad([w], lr_decay=-1.0)
