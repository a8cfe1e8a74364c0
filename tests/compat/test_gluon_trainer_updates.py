"""`gluon.Trainer.step(batch_size)` makes MXNet's updates (rescale_grad / batch_size,
clip_gradient, wd and its placement, Adam's epsilon, lr inside SGD's momentum), checked
against MXNet's documented formulas in float64 NumPy."""

import math

import numpy as np
import pytest

from tapegrad.compat import mxnet as mx
from tapegrad.compat.mxnet import autograd

W0 = np.array([0.5, -1.0, 2.0, 0.1])
COEF = [
    np.array([4.0, -2.0, 0.5, 9.0]),
    np.array([-3.0, 1.0, 6.0, -0.2]),
    np.array([1.0, 8.0, -7.0, 0.3]),
    np.array([2.0, -5.0, 0.1, 4.0]),
]
BATCH = 2


def _param(name="w", lr_mult=1.0, wd_mult=1.0):
    p = mx.gluon.Parameter(name, shape=(4,), dtype="float64", lr_mult=lr_mult, wd_mult=wd_mult)
    p.initialize(mx.init.Constant(0.0))
    p.set_data(mx.nd.array(W0, dtype="float64"))
    return p


def _train(trainer_args, params, lrs=None):
    trainer = mx.gluon.Trainer(params, *trainer_args)
    for k, c in enumerate(COEF):
        if lrs is not None:
            trainer.set_learning_rate(lrs[k])
        with autograd.record():
            loss = sum((p.data() * mx.nd.array(c, dtype="float64")).sum() for p in params)
        loss.backward()  # every parameter's gradient is c
        trainer.step(BATCH)
    return trainer


def test_sgd_momentum_with_rescale_clip_wd_and_a_changing_lr():
    lrs, mom_f, wd, clip = [0.1, 0.1, 0.03, 0.03], 0.9, 0.01, 1.5
    p = _param(lr_mult=2.0, wd_mult=0.5)
    trainer = _train(
        (
            "sgd",
            {
                "learning_rate": lrs[0],
                "momentum": mom_f,
                "wd": wd,
                "clip_gradient": clip,
                "rescale_grad": 1.0,
            },
        ),
        [p],
        lrs,
    )
    w, mom = W0.copy(), np.zeros(4)
    for lr, c in zip(lrs, COEF):  # mom = m * mom - lr * (clip(rescale * g) + wd * w)
        g = np.clip(c / BATCH, -clip, clip) + wd * 0.5 * w
        mom = mom_f * mom - lr * 2.0 * g
        w = w + mom
    np.testing.assert_allclose(p.data().asnumpy(), w, rtol=1e-12)
    assert trainer.learning_rate == lrs[-1]


def test_nag_and_plain_sgd():
    p = _param()
    _train(("nag", {"learning_rate": 0.05, "momentum": 0.8, "wd": 0.001}), [p])
    w, state = W0.copy(), np.zeros(4)
    for c in COEF:
        g = c / BATCH + 0.001 * w
        state = 0.8 * state + 0.05 * g
        w = w - (0.8 * state + 0.05 * g)
    np.testing.assert_allclose(p.data().asnumpy(), w, rtol=1e-12)
    q = _param()
    _train(("sgd", {"learning_rate": 0.1, "rescale_grad": 4.0}), [q])
    expected = W0 - 0.1 * sum(4.0 * c / BATCH for c in COEF)
    np.testing.assert_allclose(q.data().asnumpy(), expected, rtol=1e-12)


def test_adam_matches_mxnet_adam():
    lr, b1, b2, eps, wd, clip = 0.01, 0.8, 0.9, 1e-2, 0.1, 1.0
    p = _param()
    _train(
        (
            "adam",
            {
                "learning_rate": lr,
                "beta1": b1,
                "beta2": b2,
                "epsilon": eps,
                "wd": wd,
                "clip_gradient": clip,
            },
        ),
        [p],
    )
    w, m, v = W0.copy(), np.zeros(4), np.zeros(4)
    for t, c in enumerate(COEF, 1):
        g = np.clip(c / BATCH + wd * w, -clip, clip)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr * math.sqrt(1 - b2**t) / (1 - b1**t) * m / (np.sqrt(v) + eps)
    np.testing.assert_allclose(p.data().asnumpy(), w, rtol=1e-12)


def test_a_parameter_without_gradient_is_not_updated():
    p, frozen = _param("w"), _param("frozen")
    frozen.grad_req = "null"
    _train(("sgd", {"learning_rate": 0.1}), [p, frozen])
    np.testing.assert_array_equal(frozen.data().asnumpy(), W0)
    assert not np.allclose(p.data().asnumpy(), W0)


def test_trainer_gradients_are_left_as_backward_wrote_them():
    p = _param()
    trainer = mx.gluon.Trainer([p], "sgd", {"learning_rate": 0.1, "clip_gradient": 0.1})
    with autograd.record():
        (p.data() * mx.nd.array(COEF[0], dtype="float64")).sum().backward()
    trainer.step(BATCH)
    np.testing.assert_array_equal(p.grad().asnumpy(), COEF[0])  # not rescaled or clipped
    assert isinstance(p.grad(), mx.nd.NDArray)


def test_unknown_options_are_refused():
    with pytest.raises(ValueError, match="unknown sgd options"):
        mx.gluon.Trainer([_param()], "sgd", {"learning_rate": 0.1, "beta1": 0.9})
