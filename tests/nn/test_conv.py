"""Convolution and pooling: layers and functions against PyTorch (same weights in, same
outputs and gradients out), finite differences, higher order, defaults and error messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional
# PyTorch warns that it pads a copy for 'same' with even kernels (we always do)
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")


def _load_from_torch(module, tmodule):
    module.load_state_dict({k: v.detach().numpy() for k, v in tmodule.state_dict().items()})


def _close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(
        np.asarray(ours.detach().numpy()), theirs.detach().numpy(), rtol=tol, atol=tol
    )


def _compare_module(module, tmodule, x, rng):
    """Forward, then backward of a random projection: outputs, input and parameter grads."""
    xt = torch.tensor(x, requires_grad=True)
    xo = tg.tensor(x, requires_grad=True)
    out, tout = module(xo), tmodule(xt)
    assert tuple(out.shape) == tuple(tout.shape)
    _close(out, tout)
    g = rng.standard_normal(tuple(out.shape))
    (out * tg.tensor(g)).sum().backward()
    (tout * torch.tensor(g)).sum().backward()
    _close(xo.grad, xt.grad)
    tparams = dict(tmodule.named_parameters())
    for name, p in module.named_parameters():
        _close(p.grad, tparams[name].grad)


CONV2D_CASES = [
    dict(in_channels=3, out_channels=4, kernel_size=3),
    dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1),
    dict(
        in_channels=4,
        out_channels=6,
        kernel_size=(3, 2),
        stride=(1, 2),
        padding=(2, 0),
        dilation=(2, 1),
        groups=2,
    ),
    dict(in_channels=4, out_channels=4, kernel_size=3, padding=1, groups=4, bias=False),
    dict(in_channels=3, out_channels=2, kernel_size=(2, 4), padding="same"),
    dict(in_channels=3, out_channels=2, kernel_size=3, padding="valid", dilation=2),
    dict(in_channels=2, out_channels=5, kernel_size=1),
]


@pytest.mark.parametrize("kw", CONV2D_CASES)
def test_conv2d_matches_torch(kw, rng):
    module = tg.nn.Conv2d(**kw).double()
    tmodule = torch.nn.Conv2d(**kw).double()
    _load_from_torch(module, tmodule)
    _compare_module(module, tmodule, rng.standard_normal((2, kw["in_channels"], 9, 8)), rng)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (2, 1), "same"])
def test_conv2d_padding_modes_match_torch(mode, padding, rng):
    kw = dict(in_channels=2, out_channels=3, kernel_size=(3, 4), padding=padding, padding_mode=mode)
    module = tg.nn.Conv2d(**kw).double()
    tmodule = torch.nn.Conv2d(**kw).double()
    _load_from_torch(module, tmodule)
    _compare_module(module, tmodule, rng.standard_normal((2, 2, 7, 6)), rng)
    assert repr(module) == repr(tmodule)


@pytest.mark.parametrize(
    "kw",
    [
        dict(in_channels=3, out_channels=4, kernel_size=3),
        dict(
            in_channels=4, out_channels=2, kernel_size=4, stride=2, padding=3, dilation=2, groups=2
        ),
        dict(in_channels=3, out_channels=2, kernel_size=4, padding="same"),
    ],
)
def test_conv1d_matches_torch(kw, rng):
    module = tg.nn.Conv1d(**kw).double()
    tmodule = torch.nn.Conv1d(**kw).double()
    _load_from_torch(module, tmodule)
    _compare_module(module, tmodule, rng.standard_normal((3, kw["in_channels"], 13)), rng)


@pytest.mark.parametrize(
    "kw",
    [
        dict(in_channels=3, out_channels=4, kernel_size=3),
        dict(in_channels=3, out_channels=2, kernel_size=3, stride=2, padding=1, output_padding=1),
        dict(
            in_channels=4,
            out_channels=6,
            kernel_size=(2, 3),
            stride=(3, 2),
            padding=(1, 0),
            output_padding=(2, 1),
            groups=2,
            dilation=(1, 2),
        ),
        dict(in_channels=2, out_channels=2, kernel_size=2, stride=2, bias=False),
    ],
)
def test_conv_transpose2d_matches_torch(kw, rng):
    module = tg.nn.ConvTranspose2d(**kw).double()
    tmodule = torch.nn.ConvTranspose2d(**kw).double()
    _load_from_torch(module, tmodule)
    _compare_module(module, tmodule, rng.standard_normal((2, kw["in_channels"], 5, 4)), rng)


def test_conv_transpose2d_output_size_picks_output_padding(rng):
    m = tg.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
    x = tg.tensor(rng.standard_normal((1, 2, 4, 4)))
    assert m(x).shape == (1, 3, 7, 7)
    assert m(x, output_size=(8, 8)).shape == (1, 3, 8, 8)
    with pytest.raises(ValueError, match="output_padding"):
        m(x, output_size=(10, 10))


def test_conv_transpose_is_the_adjoint_of_conv(rng):
    """<conv(x, w), y> == <x, conv_transpose(y, w)> for the same stride/padding/dilation."""
    x = rng.standard_normal((2, 4, 9, 7))
    w = rng.standard_normal((6, 2, 3, 2))
    kw = dict(stride=(2, 1), padding=(1, 1), dilation=(1, 2), groups=2)
    y = F.conv2d(tg.tensor(x), tg.tensor(w), **kw)
    v = rng.standard_normal(y.shape)
    back = F.conv_transpose2d(tg.tensor(v), tg.tensor(w), output_padding=(0, 0), **kw)
    back = back.numpy()
    pad_h, pad_w = x.shape[2] - back.shape[2], x.shape[3] - back.shape[3]
    back = np.pad(back, ((0, 0), (0, 0), (0, pad_h), (0, pad_w)))  # rows no window reached
    assert np.isclose((y.numpy() * v).sum(), (x * back).sum())


POOL_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(3, 2), stride=(1, 2), padding=(1, 0)),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
]


@pytest.mark.parametrize("kw", POOL_CASES + [dict(kernel_size=2, stride=1, dilation=2)])
def test_max_pool2d_matches_torch(kw, rng):
    _compare_module(
        tg.nn.MaxPool2d(**kw), torch.nn.MaxPool2d(**kw), rng.standard_normal((2, 3, 9, 8)), rng
    )


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("kw", POOL_CASES)
def test_avg_pool2d_matches_torch(kw, count_include_pad, rng):
    _compare_module(
        tg.nn.AvgPool2d(count_include_pad=count_include_pad, **kw),
        torch.nn.AvgPool2d(count_include_pad=count_include_pad, **kw),
        rng.standard_normal((2, 3, 9, 8)),
        rng,
    )


def test_avg_pool2d_divisor_override(rng):
    x = rng.standard_normal((1, 2, 6, 6))
    ours = F.avg_pool2d(tg.tensor(x), 3, stride=2, padding=1, divisor_override=2)
    _close(ours, TF.avg_pool2d(torch.tensor(x), 3, stride=2, padding=1, divisor_override=2))


@pytest.mark.parametrize("size", [1, (3, 5), (4, None), (7, 8)])
def test_adaptive_avg_pool2d_matches_torch(size, rng):
    _compare_module(
        tg.nn.AdaptiveAvgPool2d(size),
        torch.nn.AdaptiveAvgPool2d(size),
        rng.standard_normal((2, 3, 9, 8)),
        rng,
    )


def test_pool1d_functions_match_torch(rng):
    x = rng.standard_normal((2, 3, 11))
    _close(F.max_pool1d(tg.tensor(x), 3, 2, 1), TF.max_pool1d(torch.tensor(x), 3, 2, 1))
    _close(
        F.avg_pool1d(tg.tensor(x), 3, 2, 1, count_include_pad=False),
        TF.avg_pool1d(torch.tensor(x), 3, 2, 1, count_include_pad=False),
    )
    _close(F.adaptive_avg_pool1d(tg.tensor(x), 4), TF.adaptive_avg_pool1d(torch.tensor(x), 4))


@pytest.mark.parametrize("kw", POOL_CASES + [dict(kernel_size=2, stride=1, dilation=2)])
def test_max_pool2d_return_indices_match_torch(kw, rng):
    x = rng.standard_normal((2, 3, 9, 8))
    out, idx = tg.nn.MaxPool2d(return_indices=True, **kw)(tg.tensor(x))
    tout, tidx = torch.nn.MaxPool2d(return_indices=True, **kw)(torch.tensor(x))
    _close(out, tout)
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    _, idx1 = F.max_pool1d(tg.tensor(x[:, :, 0]), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(
        idx1.numpy(), TF.max_pool1d(torch.tensor(x[:, :, 0]), 3, 2, 1, return_indices=True)[1]
    )


def test_max_pool_ties_send_the_gradient_to_the_first_maximum():
    x = np.array([[[[1.0, 1.0, 0.0, 2.0], [1.0, 0.0, 2.0, 2.0]]]])
    xo = tg.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    F.max_pool2d(xo, 2).sum().backward()
    TF.max_pool2d(xt, 2).sum().backward()
    expected = [[[[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]]]]
    np.testing.assert_array_equal(xo.grad.numpy(), expected)
    np.testing.assert_array_equal(xt.grad.numpy(), expected)


def test_unbatched_input(rng):
    conv = tg.nn.Conv2d(3, 4, 3, padding=1)
    x = tg.randn(3, 6, 5)
    assert conv(x).shape == (4, 6, 5)
    assert F.max_pool2d(x, 2).shape == (3, 3, 2)
    assert F.adaptive_avg_pool2d(x, 1).shape == (3, 1, 1)


def test_gradcheck_conv_pool_chain(rng):
    x = tg.tensor(rng.standard_normal((2, 2, 6, 5)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    b = tg.tensor(rng.standard_normal(3), requires_grad=True)

    def fn(x, w, b):
        h = F.conv2d(x, w, b, stride=1, padding=1)
        return F.avg_pool2d(F.max_pool2d(h, 2, stride=1), 2, ceil_mode=True)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_gradgradcheck_conv_transpose(rng):
    y = tg.tensor(rng.standard_normal((1, 2, 3, 3)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((2, 3, 2, 2)), requires_grad=True)
    fn = lambda y, w: F.conv_transpose2d(y, w, stride=2, output_padding=1)  # noqa: E731
    assert gradcheck(fn, (y, w))
    assert gradgradcheck(fn, (y, w))


def test_gradient_penalty_through_conv_matches_torch(rng):
    """d/dw ||d out/d x||^2 (create_graph=True), as a WGAN-GP critic computes."""
    x = rng.standard_normal((2, 1, 6, 6))
    w = rng.standard_normal((2, 1, 3, 3))

    xo = tg.tensor(x, requires_grad=True)
    wo = tg.tensor(w, requires_grad=True)
    out = F.max_pool2d(tg.tanh(F.conv2d(xo, wo, padding=1)), 2).sum()
    (gx,) = tg.autograd.grad(out, [xo], create_graph=True)
    (gx * gx).sum().backward()

    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    tout = TF.max_pool2d(torch.tanh(TF.conv2d(xt, wt, padding=1)), 2).sum()
    (tgx,) = torch.autograd.grad(tout, [xt], create_graph=True)
    (tgx * tgx).sum().backward()
    _close(gx, tgx)
    _close(wo.grad, wt.grad)


def test_first_layer_input_gets_no_gradient(rng):
    x = tg.tensor(rng.standard_normal((2, 1, 5, 5)).astype(np.float32))
    conv = tg.nn.Conv2d(1, 2, 3)
    conv(x).sum().backward()
    assert x.grad is None and conv.weight.grad is not None


def test_float32_stays_float32():
    conv = tg.nn.Conv2d(2, 3, 3, padding=1)
    out = F.max_pool2d(conv(tg.randn(2, 2, 8, 8)), 2)
    assert out.dtype == np.float32
    out.sum().backward()
    assert conv.weight.grad.dtype == np.float32


def test_default_init_and_parameters_match_torch():
    for ours, theirs in [
        (tg.nn.Conv2d(4, 8, 3, groups=2), torch.nn.Conv2d(4, 8, 3, groups=2)),
        (tg.nn.ConvTranspose2d(4, 6, (3, 2)), torch.nn.ConvTranspose2d(4, 6, (3, 2))),
        (tg.nn.Conv1d(3, 5, 4, bias=False), torch.nn.Conv1d(3, 5, 4, bias=False)),
    ]:
        shapes = {k: tuple(v.shape) for k, v in ours.state_dict().items()}
        assert shapes == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
        w = ours.weight.detach().numpy()
        bound = 1 / math.sqrt(w.shape[1] * math.prod(w.shape[2:]))
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.5 * bound
        if ours.bias is not None:
            assert np.abs(ours.bias.detach().numpy()).max() <= bound
    assert repr(tg.nn.Conv2d(1, 2, 3, stride=2, padding=1)) == repr(
        torch.nn.Conv2d(1, 2, 3, stride=2, padding=1)
    )


def test_small_cnn_learns(rng):
    tg.manual_seed(0)
    net = tg.nn.Sequential(
        tg.nn.Conv2d(1, 4, 3, padding=1),
        tg.nn.ReLU(),
        tg.nn.MaxPool2d(2),
        tg.nn.Conv2d(4, 8, 3, padding=1),
        tg.nn.ReLU(),
        tg.nn.AdaptiveAvgPool2d(1),
        tg.nn.Flatten(),
        tg.nn.Linear(8, 2),
    )
    x = rng.standard_normal((32, 1, 8, 8)).astype(np.float32)
    y = (x[:, 0, :4].mean((1, 2)) > x[:, 0, 4:].mean((1, 2))).astype(np.int64)
    x[y == 1, :, :2] += 1.0
    opt = tg.optim.Adam(net.parameters(), lr=0.03)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = F.cross_entropy(net(tg.tensor(x)), tg.tensor(y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


# ---------------------------------------------------------------- errors
def test_conv_errors_say_what_and_how(rng):
    w = tg.randn(6, 3, 3, 3)
    with pytest.raises(
        ValueError,
        match=r"conv2d: expected input with 4 dims \(N, C, H, W\).*got "
        r"shape \(5, 5\)",
    ):
        F.conv2d(tg.randn(5, 5), w)
    with pytest.raises(ValueError, match="in_channels 3 but input has 1 channels"):
        F.conv2d(tg.randn(2, 1, 5, 5), w)
    with pytest.raises(ValueError, match="in_channels 3 but input has 1 channels"):
        tg.nn.Conv2d(3, 2, 3)(tg.randn(2, 1, 5, 5))
    with pytest.raises(ValueError, match="groups=2 expects in_channels 6"):
        F.conv2d(tg.randn(2, 3, 5, 5), w, groups=2)
    with pytest.raises(ValueError, match=r"bias must have shape \(6,\)"):
        F.conv2d(tg.randn(2, 3, 5, 5), w, tg.randn(3))
    with pytest.raises(ValueError, match="smaller than the kernel"):
        F.conv2d(tg.randn(2, 3, 2, 2), w)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        F.conv2d(tg.randn(2, 3, 5, 5), w, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding must be an int, a tuple, 'valid' or 'same'"):
        F.conv2d(tg.randn(2, 3, 5, 5), w, padding="full")
    with pytest.raises(ValueError, match="stride must be positive"):
        F.conv2d(tg.randn(2, 3, 5, 5), w, stride=0)
    with pytest.raises(TypeError, match="dtype float64 and weight dtype float32"):
        F.conv2d(tg.tensor(rng.standard_normal((1, 3, 5, 5))), w)
    with pytest.raises(ValueError, match="must be divisible by groups"):
        tg.nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode must be one of 'zeros', 'reflect'"):
        tg.nn.Conv2d(3, 4, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="padding_mode must be one of 'zeros', got 'reflect'"):
        tg.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="output_padding"):
        F.conv_transpose2d(tg.randn(1, 6, 3, 3), w, stride=2, output_padding=2)


def test_pool_errors_say_what_and_how():
    with pytest.raises(ValueError, match=r"max_pool2d: expected input with 4 dims"):
        F.max_pool2d(tg.randn(4), 2)
    with pytest.raises(ValueError, match="at most half the kernel size"):
        F.max_pool2d(tg.randn(1, 1, 6, 6), 2, padding=2)
    with pytest.raises(ValueError, match="too small for kernel"):
        F.avg_pool2d(tg.randn(1, 1, 2, 2), 3)
    with pytest.raises(ValueError, match="output_size must be positive"):
        F.adaptive_avg_pool2d(tg.randn(1, 1, 4, 4), 0)


def test_cnn_training_steps_match_torch(rng):
    """The bench's W3 model (conv-relu-pool x2, linear), 3 SGD steps in float32, same weights."""

    def build(nn):
        return nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(4, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(8 * 3 * 3, 10),
        )

    ours, theirs = build(tg.nn), build(torch.nn)
    _load_from_torch(ours, theirs)
    x = rng.standard_normal((16, 1, 12, 12)).astype(np.float32)
    y = rng.integers(0, 10, 16)
    opt = tg.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        opt.zero_grad()
        F.cross_entropy(ours(tg.tensor(x)), tg.tensor(y)).backward()
        opt.step()
        topt.zero_grad()
        TF.cross_entropy(theirs(torch.tensor(x)), torch.tensor(y)).backward()
        topt.step()
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.detach().numpy(), tparams[name].detach().numpy(), rtol=1e-4, atol=1e-5
        )


# ---------------------------------------------------------------- the special paths
# 1x1 convs (no window copy), depthwise gradients (direct over the kernel offsets), pools
# over tiling windows (axis by axis), scratch buffers for conv's temporaries. Each against
# PyTorch in float64 (values, input and weight gradients), and by finite differences.
SPECIAL_CONV_CASES = [
    dict(in_channels=6, out_channels=4, kernel_size=1),
    dict(in_channels=6, out_channels=4, kernel_size=1, stride=2, groups=2),
    dict(in_channels=4, out_channels=4, kernel_size=3, padding=1, groups=4),
    dict(in_channels=3, out_channels=6, kernel_size=(3, 2), stride=(2, 1), dilation=2, groups=3),
    dict(in_channels=4, out_channels=6, kernel_size=3, padding=2, dilation=2, groups=2),
    # stride 1, groups of one input channel (ops/conv_direct.py): multiplier 2, dilation with
    # padding on one axis only
    dict(in_channels=4, out_channels=8, kernel_size=3, padding=1, groups=4),
    dict(
        in_channels=4, out_channels=4, kernel_size=(3, 2), padding=(2, 0), dilation=(2, 1), groups=4
    ),
]


@pytest.mark.parametrize("kw", SPECIAL_CONV_CASES)
def test_special_conv_paths_match_torch(kw, rng):
    module = tg.nn.Conv2d(**kw).double()
    tmodule = torch.nn.Conv2d(**kw).double()
    _load_from_torch(module, tmodule)
    _compare_module(module, tmodule, rng.standard_normal((3, kw["in_channels"], 9, 8)), rng)


@pytest.mark.parametrize(
    "kw",
    [
        dict(in_channels=4, out_channels=4, kernel_size=3, stride=2, padding=1, groups=4),
        dict(in_channels=3, out_channels=6, kernel_size=2, stride=2, groups=3, dilation=2),
        dict(in_channels=4, out_channels=2, kernel_size=1, groups=2),
        # stride 1 (ops/conv_direct.py): depthwise, and two inputs summed per group
        dict(in_channels=4, out_channels=4, kernel_size=3, padding=1, groups=4),
        dict(in_channels=4, out_channels=2, kernel_size=3, padding=2, groups=2, bias=False),
    ],
)
def test_special_conv_transpose_paths_match_torch(kw, rng):
    module = tg.nn.ConvTranspose2d(**kw).double()
    tmodule = torch.nn.ConvTranspose2d(**kw).double()
    _load_from_torch(module, tmodule)
    _compare_module(module, tmodule, rng.standard_normal((2, kw["in_channels"], 5, 4)), rng)


@pytest.mark.parametrize(
    "kw",
    [
        # output_padding >= stride, allowed because it is < dilation: the gradients' conv of g
        # reaches one more output position than y has
        dict(in_channels=2, out_channels=3, kernel_size=3, dilation=2, output_padding=1),
        dict(in_channels=4, out_channels=4, kernel_size=3, dilation=2, output_padding=1, groups=4),
        dict(
            in_channels=4,
            out_channels=2,
            kernel_size=2,
            padding=1,
            dilation=2,
            output_padding=1,
            groups=2,
        ),
        dict(
            in_channels=2,
            out_channels=2,
            kernel_size=(2, 3),
            stride=(2, 1),
            dilation=(3, 2),
            output_padding=(2, 1),
            padding=(0, 2),
        ),
    ],
)
def test_conv_transpose_output_padding_past_the_stride_has_gradients(kw, rng):
    """A transposed conv whose output_padding is at least its stride (PyTorch allows it up to
    the dilation): its gradients raised (a reshape or matmul size error); now as PyTorch's,
    and second order by finite differences."""
    module = tg.nn.ConvTranspose2d(**kw).double()
    tmodule = torch.nn.ConvTranspose2d(**kw).double()
    _load_from_torch(module, tmodule)
    _compare_module(module, tmodule, rng.standard_normal((2, kw["in_channels"], 4, 3)), rng)
    p = {k: kw[k] for k in ("stride", "padding", "output_padding", "groups", "dilation") if k in kw}
    x = tg.tensor(rng.standard_normal((1, kw["in_channels"], 3, 3)), requires_grad=True)
    w = tg.tensor(module.weight.detach().numpy(), requires_grad=True)
    assert gradgradcheck(lambda x, w: F.conv_transpose2d(x, w, **p), (x, w))


@pytest.mark.parametrize(
    "shape, kw",
    [
        ((2, 4, 5, 5), dict(groups=1, kernel=1)),  # 1x1
        ((2, 3, 5, 4), dict(groups=3, kernel=3, padding=1)),  # depthwise
        ((1, 2, 6, 5), dict(groups=2, kernel=2, stride=2, dilation=(1, 2), mult=2)),
    ],
)
def test_special_conv_paths_finite_differences(shape, kw, rng):
    kw = dict(kw)
    k, mult = kw.pop("kernel"), kw.pop("mult", 1)
    c = shape[1]
    cg = 1 if kw["groups"] > 1 else c
    x = tg.tensor(rng.standard_normal(shape), requires_grad=True)
    w = tg.tensor(rng.standard_normal((c * mult if cg == 1 else 3, cg, k, k)), requires_grad=True)
    b = tg.tensor(rng.standard_normal(w.shape[0]), requires_grad=True)

    def fn(x, w, b):
        return F.conv2d(x, w, b, **kw)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_conv3d_depthwise_and_1x1_match_torch(rng):
    x = rng.standard_normal((2, 3, 4, 5, 4))
    for w, groups, padding in [
        (rng.standard_normal((3, 1, 2, 3, 2)), 3, 1),
        (rng.standard_normal((5, 3, 1, 1, 1)), 1, 0),
    ]:
        xo, wo = tg.tensor(x, requires_grad=True), tg.tensor(w, requires_grad=True)
        xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
        out = F.conv3d(xo, wo, groups=groups, padding=padding)
        tout = TF.conv3d(xt, wt, groups=groups, padding=padding)
        _close(out, tout)
        g = rng.standard_normal(tout.shape)
        (out * tg.tensor(g)).sum().backward()
        (tout * torch.tensor(g)).sum().backward()
        _close(xo.grad, xt.grad)
        _close(wo.grad, wt.grad)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize(
    "w_shape, groups, padding", [((4, 4, 1, 1), 1, 0), ((4, 1, 3, 3), 4, 1), ((6, 4, 3, 3), 1, 1)]
)
def test_conv_paths_keep_the_dtype_and_agree_with_float64(dtype, w_shape, groups, padding, rng):
    x64, w64 = rng.standard_normal((2, 4, 6, 6)), rng.standard_normal(w_shape) * 0.3
    results = []
    for dt in (np.float64, dtype):
        x = tg.tensor(x64.astype(dt), requires_grad=True)
        w = tg.tensor(w64.astype(dt), requires_grad=True)
        out = F.conv2d(x, w, groups=groups, padding=padding)
        out.sum().backward()
        assert out.dtype == dt and x.grad.dtype == dt and w.grad.dtype == dt
        results.append([t.detach().numpy().astype(np.float64) for t in (out, x.grad, w.grad)])
    tol = 2e-2 if dtype == np.float16 else 1e-4
    for ours, exact in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(ours, exact, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("mult", [1, 2])
@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_float32_at_bench_size_matches_torch(mult, stride, rng):
    """The bench's depthwise layer (32x64x14x14, 3x3, padding 1) in float32, the direct path
    (stride 1) and im2col (stride 2): values and both gradients as PyTorch's."""
    x = rng.standard_normal((32, 64, 14, 14)).astype(np.float32)
    w = (rng.standard_normal((64 * mult, 1, 3, 3)) * 0.1).astype(np.float32)
    b = rng.standard_normal(64 * mult).astype(np.float32)
    ours = [tg.tensor(a, requires_grad=True) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = F.conv2d(*ours, padding=1, stride=stride, groups=64)
    tout = TF.conv2d(*theirs, padding=1, stride=stride, groups=64)
    g = rng.standard_normal(tout.shape).astype(np.float32)
    (out * tg.tensor(g)).sum().backward()
    (tout * torch.tensor(g)).sum().backward()
    for a, t in zip([out] + [o.grad for o in ours], [tout] + [o.grad for o in theirs], strict=True):
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize(
    "x_shape, w_shape, groups, padding, dilation",
    [
        ((2, 3, 9), (3, 1, 3), 3, 2, 2),  # 1-D depthwise
        ((2, 2, 9), (4, 1, 2), 2, (1,), 1),  # 1-D, multiplier 2
        ((2, 2, 4, 5, 4), (2, 1, 3, 2, 3), 2, (1, 0, 2), (1, 2, 1)),  # 3-D, padded, dilated
    ],
)
def test_direct_depthwise_1d_3d_matches_torch(x_shape, w_shape, groups, padding, dilation, rng):
    fn, tfn = {3: (F.conv1d, TF.conv1d), 5: (F.conv3d, TF.conv3d)}[len(x_shape)]
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    xo, wo = tg.tensor(x, requires_grad=True), tg.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    out = fn(xo, wo, groups=groups, padding=padding, dilation=dilation)
    tout = tfn(xt, wt, groups=groups, padding=padding, dilation=dilation)
    _close(out, tout)
    g = rng.standard_normal(tout.shape)
    (out * tg.tensor(g)).sum().backward()
    (tout * torch.tensor(g)).sum().backward()
    _close(xo.grad, xt.grad)
    _close(wo.grad, wt.grad)
    assert gradgradcheck(
        lambda x, w: fn(x, w, groups=groups, padding=padding, dilation=dilation), (xo, wo)
    )


def test_depthwise_results_never_share_the_scratch_buffers(rng):
    """The direct path's grids are scratch buffers too: a second call leaves the first
    call's result and gradients as they were."""
    x = tg.tensor(rng.standard_normal((2, 3, 5, 5)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((3, 1, 3, 3)), requires_grad=True)
    first = F.conv2d(x, w, padding=1, groups=3)
    kept = first.detach().numpy().copy()
    first.sum().backward()
    gx, gw = x.grad.numpy().copy(), w.grad.numpy().copy()
    second = F.conv2d(tg.tensor(rng.standard_normal((2, 3, 5, 5))), w, padding=1, groups=3)
    (second * 2).sum().backward()
    assert not np.shares_memory(first.detach().numpy(), second.detach().numpy())
    np.testing.assert_array_equal(first.detach().numpy(), kept)
    np.testing.assert_array_equal(x.grad.numpy(), gx)
    assert not np.array_equal(w.grad.numpy(), gw)


@pytest.mark.parametrize("mult, per_group", [(1, 1), (2, 1), (1, 2)])
def test_direct_conv_infinite_weight_gives_torch_infinities_not_nan(mult, per_group, rng):
    """Stride 1, groups of 1-2 channels (ops/conv_direct.py): an infinite weight meets the
    grid's padding zeros in the transposed conv (the input gradient); as in PyTorch the
    outputs it reaches are +Inf, not NaN (was 18 NaN of 50 outputs)."""
    x = rng.uniform(0.5, 1.0, (2, 2 * per_group, 5, 5))
    w = rng.uniform(0.5, 1.0, (2 * mult, per_group, 3, 3))
    w[0, 0, 0, 0] = np.inf
    xo, wo = tg.tensor(x, requires_grad=True), tg.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    F.conv2d(xo, wo, padding=1, groups=2).sum().backward()
    TF.conv2d(xt, wt, padding=1, groups=2).sum().backward()
    assert np.isinf(xt.grad.numpy()).any() and not np.isnan(xt.grad.numpy()).any()
    _close(xo.grad, xt.grad)
    if mult == 1:  # the transposed conv itself, summing `per_group` inputs per group
        wT = w.reshape(2 * per_group, 1, 3, 3)
        _close(
            F.conv_transpose2d(tg.tensor(x), tg.tensor(wT), padding=1, groups=2),
            TF.conv_transpose2d(torch.tensor(x), torch.tensor(wT), padding=1, groups=2),
        )


@pytest.mark.parametrize("at", [(0, 0), (4, 4), (2, 4)])
@pytest.mark.parametrize("mult, per_group", [(1, 1), (2, 1), (1, 2)])
def test_direct_weight_grad_infinite_input_gives_torch_infinities_not_nan(at, mult, per_group, rng):
    """The direct weight gradient's dot products run over the whole grid, where g's zeros
    meet x: an infinite input gives the +Inf entries PyTorch gives, not NaN."""
    x = rng.uniform(0.5, 1.0, (2, 2 * per_group, 5, 5))
    x[(0, 0) + at] = np.inf
    w = rng.uniform(0.5, 1.0, (2 * mult, per_group, 3, 3))
    xo, wo = tg.tensor(x, requires_grad=True), tg.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    F.conv2d(xo, wo, padding=1, groups=2).sum().backward()
    TF.conv2d(xt, wt, padding=1, groups=2).sum().backward()
    assert np.isinf(wt.grad.numpy()).any() and not np.isnan(wt.grad.numpy()).any()
    _close(wo.grad, wt.grad)


def test_conv_results_never_share_the_scratch_buffers(rng):
    """Results come out of the reused scratch buffers as new arrays: a second call (same
    shapes, so the same buffers) leaves the first result as it was, batch of one included."""
    for n in (1, 3):
        x = tg.tensor(rng.standard_normal((n, 2, 5, 5)), requires_grad=True)
        w = tg.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
        first = F.conv2d(x, w, padding=1)
        kept = first.detach().numpy().copy()
        first.sum().backward()
        gx, gw = x.grad.numpy().copy(), w.grad.numpy().copy()
        second = F.conv2d(tg.tensor(rng.standard_normal((n, 2, 5, 5))), w, padding=1)
        second.sum().backward()
        assert not np.shares_memory(first.detach().numpy(), second.detach().numpy())
        np.testing.assert_array_equal(first.detach().numpy(), kept)
        np.testing.assert_array_equal(x.grad.numpy(), gx)
        assert not np.array_equal(w.grad.numpy(), gw)  # accumulated, in its own array
        assert first.detach().numpy().flags.c_contiguous and x.grad.numpy().flags.c_contiguous


@pytest.mark.parametrize(
    "shape, kernel",
    [((2, 3, 8, 6), 2), ((2, 2, 7, 9), 3), ((1, 2, 9, 7), (3, 2)), ((2, 3, 5, 7), 2)],
)
def test_tiling_max_pool_matches_torch_with_ties(shape, kernel, rng):
    """Windows that tile the input (stride == kernel) pool axis by axis; after a ReLU most
    windows tie at 0, and the gradient goes to each window's first maximum, as PyTorch."""
    x = np.maximum(np.round(rng.standard_normal(shape)), 0.0)  # many ties, and zeros
    _compare_module(tg.nn.MaxPool2d(kernel), torch.nn.MaxPool2d(kernel), x, rng)
    x1 = x[:, :, 0]
    xo, xt = tg.tensor(x1, requires_grad=True), torch.tensor(x1, requires_grad=True)
    k = kernel if isinstance(kernel, int) else kernel[0]
    F.max_pool1d(xo, k).sum().backward()
    TF.max_pool1d(xt, k).sum().backward()
    _close(xo.grad, xt.grad)


def test_tiling_max_pool_with_nan_and_inf_matches_torch():
    x = np.array(
        [[[[1.0, np.nan, 0.0, np.inf], [np.nan, 2.0, -np.inf, -np.inf], [3.0, 3.0, 1, 2]] * 2]]
    ).reshape(1, 1, 6, 4)
    xo, xt = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = F.max_pool2d(xo, 2), TF.max_pool2d(xt, 2)
    np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_array_equal(xo.grad.numpy(), xt.grad.numpy())


def test_tiling_max_pool_3d_gradients(rng):
    from tapegrad.ops.pool import _max_pool  # no public 3-D max pool: the op itself

    x = rng.standard_normal((1, 2, 4, 4, 6))
    xo, xt = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    z = ((0, 0),) * 3
    out = _max_pool(xo, kernel=(2, 2, 2), stride=(2, 2, 2), padding=z, dilation=(1, 1, 1))
    tout = TF.max_pool3d(xt, 2)
    _close(out, tout)
    g = rng.standard_normal(tout.shape)
    (out * tg.tensor(g)).sum().backward()
    (tout * torch.tensor(g)).sum().backward()
    _close(xo.grad, xt.grad)
    x2 = tg.tensor(rng.standard_normal((1, 2, 4, 6)), requires_grad=True)
    assert gradcheck(lambda t: F.max_pool2d(t, 2), (x2,))


def test_table_adaptive_avg_pool_refuses_an_input_without_batch_and_channels():
    """The op wants (N, C, *spatial) with one spatial dim per output size; a 0-d input used
    to come back pooled (PyTorch refuses it)."""
    from tapegrad.ops.registry import OPS

    op = OPS["adaptive_avg_pool"]
    assert op(tg.ones(1, 2, 4, 4), out_size=(2, 2)).shape == (1, 2, 2, 2)
    for bad in (tg.tensor(1.0), tg.ones(2, 4, 4)):
        with pytest.raises(RuntimeError, match=r"adaptive_avg_pool: .*2 spatial dim"):
            op(bad, out_size=(2, 2))
    with pytest.raises((RuntimeError, ValueError)):
        TF.adaptive_avg_pool2d(torch.tensor(1.0), (2, 2))
