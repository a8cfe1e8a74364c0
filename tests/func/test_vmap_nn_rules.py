"""vmap's batching rules for convolution, pooling and normalisation (func/batching_nn.py):
inputs batched, weights batched (in_dims on the weights), both, out_dims, nested vmap and
per-sample gradients of a CNN, each run batched (no per-sample loop, no looped op) and
checked in float64 against the per-sample loop and against torch.func.vmap."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import func as F
from tapegrad.func import batched_replay

tnf = tg.nn.functional
B = 3


def _t(a):
    return tg.tensor(np.asarray(a, dtype=np.float64))


def _loop(f, in_dims, args, out_dims=0):
    """f on each sample, stacked at out_dims: what vmap must give."""
    outs = []
    for i in range(B):
        sample = [a if d is None else np.take(a, i, axis=d) for a, d in zip(args, in_dims)]
        outs.append(f(*[None if s is None else _t(s) for s in sample]).numpy())
    return np.stack(outs, axis=out_dims)


def _check(f, tf, in_dims, arrays, out_dims=0):
    """vmap(f) batched (no fallback, no looped op) equals the loop and torch.func.vmap(tf)."""
    got = F.vmap(f, in_dims=in_dims, out_dims=out_dims)(
        *[None if a is None else _t(a) for a in arrays]
    )
    assert batched_replay.fallback_reason() is None, batched_replay.fallback_reason()
    assert batched_replay.looped_ops() == []
    np.testing.assert_allclose(
        got.numpy(), _loop(f, in_dims, arrays, out_dims), rtol=1e-12, atol=1e-12
    )
    try:
        import torch
    except ImportError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.func.vmap(tf, in_dims=in_dims, out_dims=out_dims)(
            *[
                None if a is None else torch.from_numpy(np.asarray(a, dtype=np.float64))
                for a in arrays
            ]
        )
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def _torch_nnf():
    try:
        import torch
    except ImportError:
        return None
    return torch.nn.functional


tf = _torch_nnf()


def _either(name):
    """The same call on tapegrad's and on torch's functional module."""

    def make(mod):
        return None if mod is None else getattr(mod, name)

    return make(tnf), make(tf)


# name -> (call(fn, x, w, b), per-sample shapes of x, w, b)
_CONV = {
    "conv1d": ("conv1d", dict(stride=2, padding=1), (2, 4, 9), (6, 4, 3), (6,)),
    "conv2d": ("conv2d", dict(padding=1), (2, 4, 6, 5), (6, 4, 3, 3), (6,)),
    "conv2d groups dilation": (
        "conv2d",
        dict(groups=2, dilation=2, stride=(1, 2)),
        (2, 4, 7, 7),
        (6, 2, 2, 3),
        (6,),
    ),
    "conv2d depthwise": ("conv2d", dict(groups=4, padding=1), (2, 4, 5, 5), (4, 1, 3, 3), (4,)),
    "conv2d pointwise": ("conv2d", dict(), (2, 4, 5, 5), (3, 4, 1, 1), (3,)),
    "conv2d unbatched sample": ("conv2d", dict(padding=1), (4, 6, 5), (6, 4, 3, 3), (6,)),
    "conv3d": ("conv3d", dict(padding=1), (1, 2, 4, 4, 3), (3, 2, 3, 3, 3), (3,)),
    "conv_transpose1d": (
        "conv_transpose1d",
        dict(stride=2, padding=1, output_padding=1),
        (2, 4, 5),
        (4, 3, 3),
        (3,),
    ),
    "conv_transpose2d groups": (
        "conv_transpose2d",
        dict(stride=2, groups=2),
        (2, 4, 3, 4),
        (4, 3, 3, 2),
        (6,),
    ),
}

_DIMS = {
    "input": (0, None, None),
    "weight": (None, 0, None),
    "weight and bias": (None, 0, 0),
    "all": (0, 0, 0),
    "bias": (None, None, 0),
    "input and bias": (0, None, 0),
    "moved dims": (2, 1, 0),
}


def _batched_arrays(rng, shapes, in_dims):
    out = []
    for shape, d in zip(shapes, in_dims):
        if d is None:
            out.append(rng.standard_normal(shape))
        else:
            out.append(np.moveaxis(rng.standard_normal((B,) + shape), 0, d))
    return out


@pytest.mark.parametrize("dims", list(_DIMS))
@pytest.mark.parametrize("name", list(_CONV))
def test_convolutions(name, dims, rng):
    fn, kw, *shapes = _CONV[name]
    in_dims = _DIMS[dims]
    if dims == "moved dims" and len(shapes[0]) < 3:
        in_dims = (1, 1, 0)
    g, t = _either(fn)
    _check(
        lambda x, w, b: g(x, w, b, **kw),
        None if t is None else (lambda x, w, b: t(x, w, b, **kw)),
        in_dims,
        _batched_arrays(rng, shapes, in_dims),
    )


_POOL = {
    "max_pool1d": ("max_pool1d", dict(kernel_size=3, stride=2, padding=1), (2, 3, 9)),
    "max_pool2d": ("max_pool2d", dict(kernel_size=2), (2, 3, 6, 4)),
    "max_pool2d dilated ceil": (
        "max_pool2d",
        dict(kernel_size=2, stride=2, dilation=2, ceil_mode=True),
        (2, 3, 7, 7),
    ),
    "max_pool2d unbatched sample": ("max_pool2d", dict(kernel_size=3, stride=1), (3, 5, 5)),
    "avg_pool1d": (
        "avg_pool1d",
        dict(kernel_size=3, padding=1, count_include_pad=False),
        (2, 3, 8),
    ),
    "avg_pool2d": ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1), (2, 3, 7, 6)),
    "adaptive_avg_pool1d": ("adaptive_avg_pool1d", dict(output_size=3), (2, 3, 7)),
    "adaptive_avg_pool2d": ("adaptive_avg_pool2d", dict(output_size=(2, 3)), (2, 3, 5, 7)),
}


@pytest.mark.parametrize("name", list(_POOL))
def test_pooling_values_and_per_sample_gradients(name, rng):
    fn, kw, shape = _POOL[name]
    g, t = _either(fn)
    x = rng.standard_normal((B,) + shape)
    _check(lambda x: g(x, **kw), None if t is None else (lambda x: t(x, **kw)), (0,), [x])
    # the gradient ops (max_pool_backward, avg_pool_backward, ...) and, through a gradient
    # penalty, their own gradients (max_pool_gather, ...) run batched too
    c = rng.standard_normal(g(_t(x[0]), **kw).shape)

    def penalty(x):
        gx = F.grad(lambda v: (g(v, **kw) * _t(c)).sum() + (g(v, **kw) ** 2).sum())(x)
        return (gx**2).sum()

    got = F.vmap(F.grad(penalty))(_t(x))
    assert batched_replay.fallback_reason() is None, batched_replay.fallback_reason()
    assert batched_replay.looped_ops() == []
    np.testing.assert_allclose(got.numpy(), _loop(F.grad(penalty), (0,), [x]), rtol=1e-12)


def _norm_case(name):
    """(tg fn, torch fn, per-sample shapes of x, w, b)."""
    if name == "layer_norm":
        return (
            lambda x, w, b: tnf.layer_norm(x, (4, 3), w, b),
            tf and (lambda x, w, b: tf.layer_norm(x, (4, 3), w, b)),
            ((2, 4, 3), (4, 3), (4, 3)),
        )
    if name == "group_norm":
        return (
            lambda x, w, b: tnf.group_norm(x, 2, w, b),
            tf and (lambda x, w, b: tf.group_norm(x, 2, w, b)),
            ((2, 4, 3, 2), (4,), (4,)),
        )
    if name == "instance_norm (group_norm, a group per channel)":
        return (
            lambda x, w, b: tnf.group_norm(x, 4, w, b),
            tf and (lambda x, w, b: tf.instance_norm(x, weight=w, bias=b)),
            ((2, 4, 5), (4,), (4,)),
        )
    if name == "batch_norm training":
        return (
            lambda x, w, b: tnf.batch_norm(x, None, None, w, b, training=True),
            tf and (lambda x, w, b: tf.batch_norm(x, None, None, w, b, training=True)),
            ((3, 4, 2, 2), (4,), (4,)),
        )
    rm, rv = np.linspace(-1, 1, 4), np.linspace(0.5, 2, 4)
    return (
        lambda x, w, b: tnf.batch_norm(x, _t(rm), _t(rv), w, b, training=False),
        tf and (lambda x, w, b: tf.batch_norm(x, _torch(rm), _torch(rv), w, b, training=False)),
        ((3, 4, 5), (4,), (4,)),
    )


def _torch(a):
    import torch

    return torch.from_numpy(np.asarray(a, dtype=np.float64))


_NORMS = [
    "layer_norm",
    "group_norm",
    "instance_norm (group_norm, a group per channel)",
    "batch_norm training",
    "batch_norm eval",
]


@pytest.mark.parametrize(
    "dims", ["input", "weight and bias", "all", "bias", "input and bias", "moved dims"]
)
@pytest.mark.parametrize("name", _NORMS)
def test_normalisations(name, dims, rng):
    g, t, shapes = _norm_case(name)
    in_dims = (1, 1, 0) if dims == "moved dims" else _DIMS[dims]
    _check(g, t, in_dims, _batched_arrays(rng, shapes, in_dims))


def test_normalisation_without_affine(rng):
    x = rng.standard_normal((B, 3, 4, 5))
    for g, t in (
        (lambda v: tnf.group_norm(v, 2), tf and (lambda v: tf.group_norm(v, 2))),
        (
            lambda v: tnf.batch_norm(v, None, None, training=True),
            tf and (lambda v: tf.batch_norm(v, None, None, training=True)),
        ),
        (lambda v: tnf.layer_norm(v, (5,)), tf and (lambda v: tf.layer_norm(v, (5,)))),
    ):
        _check(g, t, (0,), [x])


def test_out_dims_place_the_batch_dimension(rng):
    x, w = rng.standard_normal((2, 4, 5, B)), rng.standard_normal((B, 6, 4, 3))
    g, t = _either("conv1d")
    _check(
        lambda x, w: g(x, w, padding=1),
        tf and (lambda x, w: t(x, w, padding=1)),
        (3, 0),
        [x, w],
        out_dims=1,
    )


def test_nested_vmap_over_inputs_and_over_weights(rng):
    """vmap over models (outer, the weights) of vmap over samples (inner, the inputs)."""
    x = rng.standard_normal((B, 2, 4, 5, 5))  # samples
    w = rng.standard_normal((2, 3, 4, 3, 3))  # 2 models
    inner = F.vmap(lambda x, w: tnf.max_pool2d(tnf.conv2d(x, w, padding=1).relu(), 2), (0, None))
    got = F.vmap(inner, in_dims=(None, 0))(_t(x), _t(w))
    # the outer vmap runs batched; the inner one, inside its trace, loops over the samples
    # (traced as getitem and stack, which have rules)
    assert batched_replay.fallback_reason() is None
    assert batched_replay.looped_ops() == []
    want = np.stack(
        [
            np.stack(
                [
                    tnf.max_pool2d(tnf.conv2d(_t(x[i]), _t(w[m]), padding=1).relu(), 2).numpy()
                    for i in range(B)
                ]
            )
            for m in range(2)
        ]
    )
    assert got.shape == (2, B, 2, 3, 2, 2)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    torch = pytest.importorskip("torch")
    t_inner = torch.func.vmap(
        lambda x, w: tf.max_pool2d(tf.conv2d(x, w, padding=1).relu(), 2), (0, None)
    )
    t_got = torch.func.vmap(t_inner, in_dims=(None, 0))(_torch(x), _torch(w))
    np.testing.assert_allclose(got.numpy(), t_got.numpy(), rtol=1e-10, atol=1e-12)


def _cnn(norm):
    tg.manual_seed(0)
    layers = [tg.nn.Conv2d(2, 4, 3, padding=1), tg.nn.ReLU()]
    if norm == "group":
        layers.append(tg.nn.GroupNorm(2, 4))
    elif norm == "batch":
        layers.append(tg.nn.BatchNorm2d(4))
    layers += [
        tg.nn.MaxPool2d(2),
        tg.nn.Conv2d(4, 4, 3, groups=2),
        tg.nn.Tanh(),
        tg.nn.AdaptiveAvgPool2d(1),
        tg.nn.Flatten(),
        tg.nn.Linear(4, 3),
    ]
    return tg.nn.Sequential(*layers).double()


@pytest.mark.parametrize("norm", ["none", "group", "batch (eval)"])
def test_per_sample_gradients_of_a_cnn_run_batched(norm, rng):
    model = _cnn(norm.split()[0])
    if norm == "batch (eval)":
        model.eval()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = _t(rng.standard_normal((5, 2, 8, 8)))
    y = tg.tensor(np.array([0, 2, 1, 1, 2]))

    def loss(p, xb, yb):
        return tnf.cross_entropy(F.functional_call(model, p, (xb[None],)), yb[None])

    got = F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    assert batched_replay.fallback_reason() is None, batched_replay.fallback_reason()
    assert batched_replay.looped_ops() == []
    for k in params:
        want = np.stack([F.grad(loss)(params, x[i], y[i])[k].numpy() for i in range(5)])
        np.testing.assert_allclose(got[k].numpy(), want, rtol=1e-10, atol=1e-12, err_msg=k)
    torch = pytest.importorskip("torch")
    tm = _torch_twin(model)
    tparams = {k: _torch(v.numpy()) for k, v in params.items()}

    def tloss(p, xb, yb):
        out = torch.func.functional_call(tm, p, (xb[None],))
        return torch.nn.functional.cross_entropy(out, yb[None])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tgot = torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))(
            tparams, _torch(x.numpy()), torch.from_numpy(y.numpy())
        )
    for k in params:
        np.testing.assert_allclose(got[k].numpy(), tgot[k].numpy(), rtol=1e-9, atol=1e-12)


def _torch_twin(model):
    """The same network in PyTorch (float64, the same weights and buffers, same mode)."""
    import torch

    mods = []
    for m in model:
        name = type(m).__name__
        if name == "Conv2d":
            mods.append(
                torch.nn.Conv2d(
                    m.in_channels, m.out_channels, m.kernel_size, padding=m.padding, groups=m.groups
                )
            )
        elif name == "GroupNorm":
            mods.append(torch.nn.GroupNorm(m.num_groups, m.num_channels))
        elif name == "BatchNorm2d":
            mods.append(torch.nn.BatchNorm2d(m.num_features))
        elif name == "MaxPool2d":
            mods.append(torch.nn.MaxPool2d(2))
        elif name == "AdaptiveAvgPool2d":
            mods.append(torch.nn.AdaptiveAvgPool2d(1))
        elif name == "Linear":
            mods.append(torch.nn.Linear(m.in_features, m.out_features))
        else:
            mods.append(getattr(torch.nn, name)())
    tm = torch.nn.Sequential(*mods).double()
    state = {k: _torch(v.numpy()) for k, v in model.state_dict().items()}
    tm.load_state_dict(state)
    tm.train(model.training)
    return tm


def test_per_model_gradients_of_an_ensemble_batch_the_weights(rng):
    """in_dims on the weights: vmap over stacked parameters of several models."""
    model = _cnn("group")
    params = {k: v.detach() for k, v in model.named_parameters()}
    stacked = {
        k: _t(np.stack([v.numpy() * (1 + 0.1 * m) for m in range(B)])) for k, v in params.items()
    }
    x = _t(rng.standard_normal((4, 2, 8, 8)))
    y = tg.tensor(np.array([0, 2, 1, 1]))

    def loss(p, xb, yb):
        return tnf.cross_entropy(F.functional_call(model, p, (xb,)), yb)

    got = F.vmap(F.grad(loss), in_dims=(0, None, None))(stacked, x, y)
    assert batched_replay.fallback_reason() is None, batched_replay.fallback_reason()
    assert batched_replay.looped_ops() == []
    for k in params:
        want = np.stack(
            [F.grad(loss)({n: v[m] for n, v in stacked.items()}, x, y)[k].numpy() for m in range(B)]
        )
        np.testing.assert_allclose(got[k].numpy(), want, rtol=1e-10, atol=1e-12, err_msg=k)
    torch = pytest.importorskip("torch")
    tm = _torch_twin(model)

    def tloss(p, xb, yb):
        return torch.nn.functional.cross_entropy(torch.func.functional_call(tm, p, (xb,)), yb)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tgot = torch.func.vmap(torch.func.grad(tloss), in_dims=(0, None, None))(
            {k: _torch(v.numpy()) for k, v in stacked.items()},
            _torch(x.numpy()),
            torch.from_numpy(y.numpy()),
        )
    for k in params:
        np.testing.assert_allclose(got[k].numpy(), tgot[k].numpy(), rtol=1e-9, atol=1e-12)


def test_batch_norm_updating_running_statistics_runs_per_sample(rng):
    bn = tg.nn.BatchNorm2d(3).double()
    bn.weight.requires_grad_(False)
    bn.bias.requires_grad_(False)
    ref = tg.nn.BatchNorm2d(3).double()
    x = _t(rng.standard_normal((B, 2, 3, 2, 2)))
    got = F.vmap(bn)(x)
    assert "statistics" in batched_replay.fallback_reason()
    want = np.stack([ref(x[i]).detach().numpy() for i in range(B)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), ref.running_var.numpy(), rtol=1e-12)


def test_batch_norm_buffers_passed_to_functional_call_stay_batched(rng):
    """Eval-mode batch norm whose running statistics come in as buffers (functional_call's
    (params, buffers) pattern) runs batched; per-model buffers (in_dims 0) run per sample."""
    model = _cnn("batch").eval()
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() + 0.5 for k, v in model.named_buffers() if v.dtype.kind == "f"}
    x = _t(rng.standard_normal((4, 2, 8, 8)))
    y = tg.tensor(np.array([0, 2, 1, 1]))

    def loss(p, b, xb, yb):
        return tnf.cross_entropy(F.functional_call(model, (p, b), (xb[None],)), yb[None])

    got = F.vmap(F.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)
    assert batched_replay.fallback_reason() is None, batched_replay.fallback_reason()
    for k in params:
        want = np.stack([F.grad(loss)(params, buffers, x[i], y[i])[k].numpy() for i in range(4)])
        np.testing.assert_allclose(got[k].numpy(), want, rtol=1e-10, atol=1e-12, err_msg=k)
    per_model = {
        k: _t(np.stack([v.numpy() * (1 + 0.1 * m) for m in range(4)])) for k, v in buffers.items()
    }

    def model_loss(b, xb, yb):
        return loss(params, b, xb, yb)

    got = F.vmap(model_loss, in_dims=(0, 0, 0))(per_model, x, y)
    assert "batched tensor as a parameter" in batched_replay.fallback_reason()
    want = [
        model_loss({k: v[i] for k, v in per_model.items()}, x[i], y[i]).item() for i in range(4)
    ]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
