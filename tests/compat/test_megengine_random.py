"""mge.random: RNG streams and seeding, MegEngine 1.13's output shapes, and the moments of
each sampler (upstream's test_rng.py checks, on one device: its own versions place two
RNGs on xpu0 / xpu1)."""

import numpy as np
import pytest

import tapegrad.compat.megengine as mge
from tapegrad.compat.megengine import random


@pytest.mark.parametrize(
    "draw",
    [
        lambda r: r.uniform(size=(100,)),
        lambda r: r.normal(size=(100,)),
        lambda r: r.gamma(2, size=(100,)),
        lambda r: r.beta(2, 1, size=(100,)),
        lambda r: r.poisson(mge.tensor([[2.0, 3.0], [9.0, 10.0]]), size=(100,)),
        lambda r: r.permutation(1000),
    ],
)
def test_rng_seed_gives_its_own_reproducible_stream(draw):
    m1, m2, m3 = random.RNG(seed=111), random.RNG(seed=111), random.RNG(seed=222)
    a, b, c = draw(m1), draw(m2), draw(m3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not (a.numpy() == c.numpy()).all()
    assert not (a.numpy() == draw(m1).numpy()).all()  # the stream advances


def test_module_level_samplers_follow_the_global_seed():
    random.seed(10)
    a, b = random.uniform(size=[10, 10]), random.uniform(size=[10, 10])
    random.seed(10)
    np.testing.assert_array_equal(random.uniform(size=[10, 10]).numpy(), a.numpy())
    assert not (a.numpy() == b.numpy()).all()
    random.seed(10)
    g1 = random.gamma(2.0, 1.0, (5,)).numpy()
    random.seed(10)
    np.testing.assert_array_equal(random.gamma(2.0, 1.0, (5,)).numpy(), g1)
    random.seed(11)
    assert not (random.gamma(2.0, 1.0, (5,)).numpy() == g1).all()


def test_shapes_and_dtypes_follow_megengine():
    r = random.RNG(0)
    assert r.uniform().shape == (1,) and r.normal().shape == (1,)
    assert r.gamma(2.0).shape == () and r.gamma(2.0, size=3).shape == (3,)
    shape = mge.tensor([[2.0], [10.0]])
    scale = mge.tensor([1.0, 5.0])
    assert r.gamma(shape, scale, size=2).shape == (2, 2, 2)
    assert r.beta(mge.tensor([[2.0], [3.0]]), mge.tensor([0.5, 5.0])).shape == (2, 2)
    assert r.poisson(2.0, size=(1, 3)).shape == (1, 3)
    for out in [r.uniform(size=2), r.gamma(2.0, size=2), r.beta(2, 1, 2), r.poisson(2.0, 2)]:
        assert isinstance(out, mge.Tensor) and out.dtype == np.float32
    assert r.permutation(10).dtype == np.int32
    assert r.permutation(10, dtype="float32").dtype == np.float32
    for sz in [(0,), (0, 0, 0), (10, 0, 10)]:
        for out in [r.uniform(0, 1, sz), r.normal(0, 1, sz), r.gamma(2, 1, sz), r.beta(2, 1, sz)]:
            assert out.shape == sz
    assert r.permutation(0).shape == (0,)


def test_uniform_and_normal_moments():
    r = random.RNG(1)
    u = r.uniform(low=-234, high=123, size=(20, 30, 40)).numpy()
    assert u.min() >= -234 and u.max() < 123
    assert abs(u.mean() - (-234 + 123) / 2) / (123 + 234) < 0.01
    n = r.normal(mean=-1, std=2, size=(20, 30, 40)).numpy()
    assert abs(n.mean() + 1) < 0.05 and abs(n.std() - 2) < 0.05


def test_gamma_moments_broadcast_over_shape_and_scale():
    r = random.RNG(2)
    k = np.array([[2, 3, 4], [9, 10, 11]], "float32")
    s = np.array([0.5, 1, 1.5], "float32")
    out = r.gamma(shape=mge.tensor(k), scale=mge.tensor(s), size=(20, 30, 40)).numpy()
    assert out.shape == (20, 30, 40, 2, 3)
    np.testing.assert_allclose(out.mean(axis=(0, 1, 2)), k * s, rtol=0.03)
    np.testing.assert_allclose(out.std(axis=(0, 1, 2)), np.sqrt(k) * s, rtol=0.05)


def test_beta_and_poisson_moments():
    r = random.RNG(3)
    a = np.array([[2, 3, 4], [9, 10, 11]], "float32")
    b = np.array([0.5, 1, 1.5], "float32")
    out = r.beta(alpha=mge.tensor(a), beta=mge.tensor(b), size=(100, 100)).numpy()
    assert out.shape == (100, 100, 2, 3) and out.min() > 0 and out.max() <= 1
    std = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    np.testing.assert_allclose(out.mean(axis=(0, 1)), a / (a + b), atol=0.05 * std.max())
    np.testing.assert_allclose(out.std(axis=(0, 1)), std, rtol=0.05)
    lam = np.array([[2, 3, 4], [9, 10, 11]], "float32")
    p = r.poisson(mge.tensor(lam), size=(100, 100)).numpy()
    assert p.shape == (100, 100, 2, 3)
    np.testing.assert_array_equal(p, np.round(p))
    np.testing.assert_allclose(p.mean(axis=(0, 1)), lam, rtol=0.03)
    np.testing.assert_allclose(p.std(axis=(0, 1)), np.sqrt(lam), rtol=0.05)
    e = r.exponential(rate=4.0, size=(200, 100)).numpy()
    assert abs(e.mean() - 0.25) < 0.01


def test_permutation_of_an_int_and_of_a_tensor():
    r = random.RNG(4)
    p = r.permutation(1000).numpy()
    np.testing.assert_array_equal(np.sort(p), np.arange(1000))
    assert (p == np.arange(1000)).sum() < 500
    x = mge.tensor(np.arange(18, dtype="float32").reshape(6, 3))
    y = r.permutation(x).numpy()
    assert y.shape == (6, 3)
    np.testing.assert_array_equal(np.sort(y[:, 0]), x.numpy()[:, 0])
    np.testing.assert_array_equal(y - y[:, :1], np.tile([0.0, 1.0, 2.0], (6, 1)))  # rows kept
    np.testing.assert_array_equal(x.numpy(), np.arange(18).reshape(6, 3))  # not in place
    assert r.permutation(mge.tensor(7)).shape == (1,)


def test_shuffle_is_in_place_along_the_first_axis():
    x = mge.tensor(np.arange(18, dtype="float32").reshape(6, 3))
    before = x.numpy().copy()
    assert random.RNG(5).shuffle(x) is None
    after = x.numpy()
    assert after.shape == (6, 3) and not (after == before).all()
    np.testing.assert_array_equal(after[np.argsort(after[:, 0])], before)
    y = mge.tensor(np.arange(18, dtype="float32").reshape(6, 3))
    random.RNG(5).shuffle(y)
    np.testing.assert_array_equal(y.numpy(), after)


def test_misuse_raises_naming_the_sampler():
    with pytest.raises(ValueError, match=r"mge.random.gamma: shape must be > 0"):
        random.gamma(0.0)
    with pytest.raises(ValueError, match=r"mge.random.beta: beta must be > 0"):
        random.beta(1.0, mge.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match=r"mge.random.poisson: lam must be >= 0"):
        random.poisson(-1.0)
    with pytest.raises(ValueError, match=r"mge.random.RNG: seed"):
        random.RNG(seed=-1)
    with pytest.raises(TypeError, match=r"mge.random.permutation: n must be an int"):
        random.permutation([1, 2])
    with pytest.raises(ValueError, match=r"mge.random.shuffle"):
        random.shuffle(mge.tensor(3.0))
    with pytest.raises(AttributeError, match="multinomial"):
        random.multinomial  # noqa: B018


@pytest.mark.parametrize("seeded", [True, False])
def test_traced_functions_keep_drawing_fresh_samples(seeded):
    import warnings

    r = random.RNG(seed=8) if seeded else random

    @mge.jit.trace(symbolic=True)
    def noisy(x):
        return x + r.normal(size=(4,))

    x = mge.tensor(np.zeros(4, "float32"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the run-eagerly notice of tg.compile
        a, b, c = (noisy(x).numpy() for _ in range(3))
    assert not (a == b).all() and not (b == c).all()
