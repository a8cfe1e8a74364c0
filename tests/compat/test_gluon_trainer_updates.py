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


def _backward(params, c):
    with autograd.record():
        loss = sum((p.data() * mx.nd.array(c, dtype="float64")).sum() for p in params)
    loss.backward()


def test_lr_mult_and_wd_mult_changed_between_steps_take_effect():
    # MXNet reads a parameter's lr_mult / wd_mult at every update
    p = _param()
    trainer = mx.gluon.Trainer([p], "sgd", {"learning_rate": 0.1, "momentum": 0.5, "wd": 0.01})
    w, mom = W0.copy(), np.zeros(4)
    for k, (lr_mult, wd_mult) in enumerate([(1.0, 1.0), (0.5, 2.0), (3.0, 0.0)]):
        p.lr_mult, p.wd_mult = lr_mult, wd_mult
        _backward([p], COEF[k])
        trainer.step(BATCH)
        mom = 0.5 * mom - 0.1 * lr_mult * (COEF[k] / BATCH + 0.01 * wd_mult * w)
        w = w + mom
        np.testing.assert_allclose(p.data().asnumpy(), w, rtol=1e-12)


def test_a_stale_gradient_raises_and_ignore_stale_grad_skips_it():
    used, unused = _param("used"), _param("unused")
    trainer = mx.gluon.Trainer([used, unused], "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    _backward([used, unused], COEF[0])
    trainer.step(BATCH)
    after_first = unused.data().asnumpy().copy()
    _backward([used], COEF[1])  # `unused` keeps the gradient of the first backward
    before = used.data().asnumpy().copy()
    with pytest.raises(UserWarning, match="'unused' has not been updated by backward"):
        trainer.step(BATCH)
    np.testing.assert_array_equal(used.data().asnumpy(), before)  # nothing was updated
    trainer.step(BATCH, ignore_stale_grad=True)
    np.testing.assert_array_equal(unused.data().asnumpy(), after_first)  # momentum too
    assert not np.array_equal(used.data().asnumpy(), before)
    with pytest.raises(UserWarning, match="'used', 'unused'"):
        trainer.step(BATCH)  # both stale now


def test_a_reinitialized_parameter_keeps_being_trained():
    p = _param()
    trainer = mx.gluon.Trainer([p], "sgd", {"learning_rate": 0.1})
    _backward([p], COEF[0])
    trainer.step(BATCH)
    p.initialize(mx.init.Constant(1.0), force_reinit=True)  # a new array
    _backward([p], COEF[1])
    trainer.step(BATCH)
    np.testing.assert_allclose(p.data().asnumpy(), 1.0 - 0.1 * COEF[1] / BATCH, rtol=1e-12)


def test_lr_scheduler_sets_the_rate_of_every_update():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=123.0)
    p = _param()
    trainer = mx.gluon.Trainer([p], "sgd", {"learning_rate": 0.1, "lr_scheduler": sched})
    assert sched.base_lr == 0.1  # the Trainer's learning_rate is the schedule's start
    w = W0.copy()
    # the n-th update (from 1) uses 0.1 * 0.5 ** floor((n - 1) / 2)
    for n, c in enumerate(COEF, 1):
        _backward([p], c)
        trainer.step(BATCH)
        lr = 0.1 * 0.5 ** ((n - 1) // 2)
        w = w - lr * c / BATCH
        np.testing.assert_allclose(p.data().asnumpy(), w, rtol=1e-12)
        assert trainer.learning_rate == pytest.approx(lr)
    with pytest.raises(UserWarning, match="has an lr_scheduler"):
        trainer.set_learning_rate(0.5)
    with pytest.raises(TypeError, match="lr_scheduler must be"):
        mx.gluon.Trainer([_param()], "sgd", {"lr_scheduler": 0.5})


def test_lr_schedulers_follow_mxnets_formulas():
    multi = mx.lr_scheduler.MultiFactorScheduler(step=[2, 5], factor=0.1, base_lr=1.0)
    assert [multi(n) for n in range(1, 8)] == pytest.approx([1, 1, 0.1, 0.1, 0.1, 0.01, 0.01])
    poly = mx.lr_scheduler.PolyScheduler(max_update=10, base_lr=2.0, pwr=2, final_lr=0.5)
    for n in (0, 3, 10):
        assert poly(n) == pytest.approx(0.5 + 1.5 * (1 - n / 10) ** 2)
    assert poly(20) == pytest.approx(0.5)  # past max_update: the last rate
    cos = mx.lr_scheduler.CosineScheduler(
        max_update=12, base_lr=1.0, final_lr=0.0, warmup_steps=2, warmup_begin_lr=0.2
    )
    assert cos(0) == pytest.approx(0.2)
    assert cos(1) == pytest.approx(0.6)  # linear warm-up towards base_lr
    assert cos(7) == pytest.approx((1 + math.cos(math.pi * 5 / 10)) / 2)
    const = mx.lr_scheduler.FactorScheduler(
        step=3,
        factor=0.5,
        base_lr=1.0,
        warmup_steps=2,
        warmup_begin_lr=0.05,
        warmup_mode="constant",
    )
    assert const(1) == 0.05
    floor = mx.lr_scheduler.FactorScheduler(step=1, factor=0.1, stop_factor_lr=1e-3, base_lr=1)
    assert floor(10) == pytest.approx(1e-3)
    with pytest.raises(ValueError, match="factor must be <= 1"):
        mx.lr_scheduler.FactorScheduler(step=1, factor=2)
    with pytest.raises(ValueError, match="step must be increasing"):
        mx.lr_scheduler.MultiFactorScheduler(step=[3, 2])
