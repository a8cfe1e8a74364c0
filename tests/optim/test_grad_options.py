"""The optimizers' gradient options (grad_scale, clip_value, clip_after_decay), SGD's
lr_in_momentum and Adam's eps_before_correction, against the update formulas MXNet
documents (float64, hand-written NumPy), with gradients that the clipping cuts."""

import math

import numpy as np
import pytest

import tapegrad as tg

STEPS = 6


def _grads(rng, shape=(5,)):
    return [rng.normal(0.0, 3.0, size=shape) for _ in range(STEPS)]


def _run(opt_cls, w0, grads, lrs=None, **kwargs):
    p = tg.nn.Parameter(tg.tensor(w0.copy()))
    opt = opt_cls([p], **kwargs)
    for k, g in enumerate(grads):
        if lrs is not None:
            opt.param_groups[0]["lr"] = lrs[k]
        p.grad = tg.tensor(g)
        opt.step()
    return p.detach().numpy()


def _clip(x, c):
    return np.clip(x, -c, c)


def test_sgd_matches_mxnet_sgd_update(rng):
    w0, grads = rng.normal(size=5), _grads(rng)
    lr, wd, scale, c = 0.1, 0.01, 0.25, 0.5
    w = w0.copy()
    for g in grads:  # weight = weight - lr * (clip(rescale * grad) + wd * weight)
        w = w - lr * (_clip(scale * g, c) + wd * w)
    got = _run(tg.optim.SGD, w0, grads, lr=lr, weight_decay=wd, grad_scale=scale, clip_value=c)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_sgd_lr_in_momentum_matches_mxnet_momentum_with_a_changing_lr(rng):
    w0, grads = rng.normal(size=5), _grads(rng)
    lrs = [0.1, 0.1, 0.05, 0.05, 0.02, 0.02]
    mom_f, wd, scale, c = 0.9, 0.01, 0.5, 1.0
    w, mom = w0.copy(), np.zeros(5)
    for lr, g in zip(lrs, grads):  # mom = momentum * mom - lr * (clip(...) + wd * w)
        mom = mom_f * mom - lr * (_clip(scale * g, c) + wd * w)
        w = w + mom
    got = _run(
        tg.optim.SGD,
        w0,
        grads,
        lrs,
        lr=lrs[0],
        momentum=mom_f,
        weight_decay=wd,
        grad_scale=scale,
        clip_value=c,
        lr_in_momentum=True,
    )
    np.testing.assert_allclose(got, w, rtol=1e-12)
    torch_form = _run(
        tg.optim.SGD,
        w0,
        grads,
        lrs,
        lr=lrs[0],
        momentum=mom_f,
        weight_decay=wd,
        grad_scale=scale,
        clip_value=c,
    )
    assert not np.allclose(torch_form, w, rtol=1e-6)  # the option is what makes them agree


def test_nesterov_lr_in_momentum_matches_mxnet_nag(rng):
    w0, grads = rng.normal(size=5), _grads(rng)
    lr, mom_f, wd = 0.05, 0.9, 0.001
    w, state = w0.copy(), np.zeros(5)
    for g in grads:  # state = m * state + lr * g; weight -= m * state + lr * g
        gg = g + wd * w
        state = mom_f * state + lr * gg
        w = w - (mom_f * state + lr * gg)
    got = _run(
        tg.optim.SGD,
        w0,
        grads,
        lr=lr,
        momentum=mom_f,
        nesterov=True,
        weight_decay=wd,
        lr_in_momentum=True,
    )
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_adam_options_match_mxnet_adam_update(rng):
    w0, grads = rng.normal(size=5), _grads(rng)
    lr, b1, b2, eps, wd, scale, c = 0.01, 0.9, 0.999, 1e-3, 0.1, 0.5, 1.0
    w, m, v = w0.copy(), np.zeros(5), np.zeros(5)
    for t, g in enumerate(grads, 1):
        gg = _clip(scale * g + wd * w, c)  # MXNet's Adam: weight decay before the clip
        m = b1 * m + (1 - b1) * gg
        v = b2 * v + (1 - b2) * gg * gg
        lr_t = lr * math.sqrt(1 - b2**t) / (1 - b1**t)
        w = w - lr_t * m / (np.sqrt(v) + eps)  # epsilon before the bias correction
    got = _run(
        tg.optim.Adam,
        w0,
        grads,
        lr=lr,
        betas=(b1, b2),
        eps=eps,
        weight_decay=wd,
        grad_scale=scale,
        clip_value=c,
        clip_after_decay=True,
        eps_before_correction=True,
    )
    np.testing.assert_allclose(got, w, rtol=1e-12)
    pytorch_eps = _run(
        tg.optim.Adam,
        w0,
        grads,
        lr=lr,
        betas=(b1, b2),
        eps=eps,
        weight_decay=wd,
        grad_scale=scale,
        clip_value=c,
        clip_after_decay=True,
    )
    assert not np.allclose(pytorch_eps, w, rtol=1e-6)


def test_clip_after_decay_changes_where_the_decay_is_clipped(rng):
    w0 = np.full(3, 10.0)
    grads = [np.array([0.1, -0.1, 5.0])]
    before = _run(tg.optim.SGD, w0, grads, lr=1.0, weight_decay=1.0, clip_value=1.0)
    after = _run(
        tg.optim.SGD, w0, grads, lr=1.0, weight_decay=1.0, clip_value=1.0, clip_after_decay=True
    )
    np.testing.assert_allclose(before, w0 - (np.clip(grads[0], -1, 1) + w0))
    np.testing.assert_allclose(after, w0 - np.clip(grads[0] + w0, -1, 1))


def test_default_options_change_nothing(rng):
    w0, grads = rng.normal(size=5), _grads(rng)
    w = w0.copy()
    for g in grads:
        w = w - 0.1 * g
    np.testing.assert_allclose(_run(tg.optim.SGD, w0, grads, lr=0.1), w, rtol=1e-12)
    opt = tg.optim.Adam([tg.nn.Parameter(tg.ones(1))])
    group = opt.param_groups[0]
    assert (
        group["grad_scale"],
        group["clip_value"],
        group["clip_after_decay"],
        group["eps_before_correction"],
    ) == (1.0, None, False, False)


def test_bad_gradient_options_raise_naming_the_option():
    p = tg.nn.Parameter(tg.ones(2))
    with pytest.raises(ValueError, match="clip_value"):
        tg.optim.SGD([p], lr=0.1, clip_value=-1.0)
    with pytest.raises(ValueError, match="grad_scale"):
        tg.optim.Adam([p], grad_scale=float("nan"))
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['clip'\\]"):
        tg.optim.SGD([p], lr=0.1, clip=1.0)


def test_state_dict_saved_before_the_options_existed_loads_with_their_defaults():
    p = tg.nn.Parameter(tg.ones(2))
    opt = tg.optim.SGD([p], lr=0.1, momentum=0.9, clip_value=0.5)
    old = opt.state_dict()
    for key in ("grad_scale", "clip_value", "clip_after_decay", "lr_in_momentum"):
        del old["param_groups"][0][key]
    opt.load_state_dict(old)
    assert opt.param_groups[0]["clip_value"] == 0.5  # kept from the optimizer as built
    p.grad = tg.tensor([4.0, -4.0])
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [1.0 - 0.1 * 0.5, 1.0 + 0.1 * 0.5])
