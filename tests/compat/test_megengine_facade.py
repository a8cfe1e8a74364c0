"""The MegEngine facade's defaults and mappings: dtypes, functional semantics, modules,
optimizers."""

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.functional as F
import tapegrad.compat.megengine.module as M
from tapegrad.compat.megengine.autodiff import GradManager


def test_tensor_dtype_defaults():
    assert mge.tensor([1, 2]).dtype == np.int32
    assert mge.tensor([1.0]).dtype == np.float32
    assert mge.tensor(np.array([1.0])).dtype == np.float32  # float64 arrays too
    assert mge.Tensor([1.0, 2.0]).shape == (2,)
    assert type(mge.tensor([1.0])) is mge.Tensor and issubclass(mge.Tensor, tg.Tensor)
    assert not isinstance(tg.ones(1), mge.Tensor)  # its own type, not an alias of the core's
    assert mge.tensor([1.0], dtype="float16").dtype == np.float16


def test_functional_follows_megengine():
    a = mge.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    arr = a.numpy()
    np.testing.assert_array_equal(F.max(a, axis=0).numpy(), [4, 5, 6])
    assert F.var(a).item() == pytest.approx(arr.var())
    assert F.std(a, axis=1).numpy() == pytest.approx(arr.std(axis=1))
    np.testing.assert_allclose(F.softmax(a).numpy().sum(axis=1), [1, 1], rtol=1e-6)  # axis 1
    v = mge.tensor([1.0, 2.0, 3.0])
    np.testing.assert_allclose(F.softmax(v).numpy().sum(), 1, rtol=1e-6)  # axis 0 for 1-D
    np.testing.assert_array_equal(F.repeat(a, 2, axis=1).numpy(), np.repeat(arr, 2, axis=1))
    assert [p.shape for p in F.split(a, [1], axis=1)] == [(2, 1), (2, 2)]
    np.testing.assert_array_equal(F.matmul(a, a, transpose_b=True).numpy(), arr @ arr.T)
    np.testing.assert_array_equal(F.transpose(a, (1, 0)).numpy(), arr.T)
    assert F.arange(3).dtype == np.float32
    np.testing.assert_array_equal(F.clip(a, upper=2).numpy(), np.minimum(arr, 2))


def test_losses_against_formulas():
    logits = mge.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]])
    label = mge.tensor([2, 0])
    lp = logits.numpy() - np.log(np.exp(logits.numpy()).sum(axis=1, keepdims=True))
    assert F.nn.cross_entropy(logits, label).item() == pytest.approx(
        -(lp[0, 2] + lp[1, 0]) / 2, rel=1e-5
    )
    probs = F.softmax(logits, axis=1)
    assert F.nn.cross_entropy(probs, label, with_logits=False).item() == pytest.approx(
        -(lp[0, 2] + lp[1, 0]) / 2, rel=1e-5
    )
    smooth = F.nn.cross_entropy(logits, label, label_smooth=0.1).item()
    manual = np.mean(
        [-(0.9 * lp[0, 2] + 0.1 * lp[0].mean()), -(0.9 * lp[1, 0] + 0.1 * lp[1].mean())]
    )
    assert smooth == pytest.approx(manual, rel=1e-5)
    p, t = mge.tensor([0.2, 0.7]), mge.tensor([0.0, 1.0])
    assert F.nn.square_loss(p, t).item() == pytest.approx((0.04 + 0.09) / 2)
    bce = -(np.log(0.8) + np.log(0.7)) / 2
    assert F.nn.binary_cross_entropy(p, t, with_logits=False).item() == pytest.approx(bce, rel=1e-5)


def test_modules_keep_parameters_untracked_and_follow_train_eval():
    net = M.Sequential(M.Linear(3, 4), M.ReLU(), M.Dropout(0.5), M.Linear(4, 1))
    params = list(net.parameters())
    assert len(params) == 4 and not any(p.requires_grad for p in params)
    x = mge.tensor(np.ones((8, 3)))
    net.eval()
    np.testing.assert_array_equal(net(x).numpy(), net(x).numpy())  # no dropout
    bn = M.BatchNorm2d(2)
    bn.train()
    bn(mge.tensor(np.arange(16.0).reshape(2, 2, 2, 2)))
    # momentum=0.9 keeps 90% of the running statistics (MegEngine's convention)
    batch_mean = np.arange(16.0).reshape(2, 2, 2, 2).mean(axis=(0, 2, 3))
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * batch_mean, rtol=1e-5)


def test_optimizer_chaining_and_adam_step():
    w = mge.Parameter([1.0, -2.0])
    gm = GradManager().attach([w])
    opt = mge.optimizer.Adam([w], lr=0.1)
    with gm:
        gm.backward((w * w).sum())
    assert opt.step() is opt
    np.testing.assert_allclose(w.numpy(), [0.9, -1.9], rtol=1e-5)  # Adam's first step: lr*sign
    assert opt.clear_grad() is opt and w.grad is None
    with pytest.raises(TypeError):
        mge.optimizer.SGD([w])  # lr is required, as in MegEngine


def test_conv2d_accepts_megengine_bias_shape():
    x = mge.tensor(np.ones((1, 1, 3, 3)))
    w = mge.tensor(np.ones((2, 1, 2, 2)))
    b = mge.tensor(np.array([1.0, 2.0]).reshape(1, 2, 1, 1))
    out = F.nn.conv2d(x, w, b)
    np.testing.assert_array_equal(out.numpy()[0, :, 0, 0], [5.0, 6.0])
