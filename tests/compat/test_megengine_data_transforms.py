"""The MegEngine facade's crop, pad and colour transforms (megengine.data.transform), their
values against NumPy (the upstream test_transform.py checks their shapes only)."""

import numpy as np
import pytest

from tapegrad.compat.megengine.data import transform as T


def _image(h=6, w=5, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3)).astype(np.uint8)


def test_pad_sizes_and_per_channel_values():
    img = _image(2, 3)
    out = T.Pad(1, value=[7, 8, 9]).apply(img)
    assert out.shape == (4, 5, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out[1:3, 1:4], img)
    np.testing.assert_array_equal(out[0, 0], [7, 8, 9])
    np.testing.assert_array_equal(out[3, 4], [7, 8, 9])
    bottom_right = T.Pad((2, 1)).apply(img)  # two ints: bottom and right only
    assert bottom_right.shape == (4, 4, 3)
    np.testing.assert_array_equal(bottom_right[:2, :3], img)
    assert not bottom_right[2:].any() and not bottom_right[:, 3:].any()
    sides = T.Pad((1, 0, 0, 2), value=5).apply(img)  # top, bottom, left, right
    np.testing.assert_array_equal(sides[1:, :3], img)
    assert (sides[0] == 5).all() and (sides[:, 3:] == 5).all()
    assert T.Pad(1, value=0.5).apply(img).dtype == np.float32  # a float value: float32
    with pytest.raises(ValueError, match="Pad"):
        T.Pad((1, 2, 3)).apply(img)


def test_center_crop_offsets_are_rounded_halves():
    img = _image(7, 8)
    out = T.CenterCrop((4, 3)).apply(img)
    y, x = round((7 - 4) / 2), round((8 - 3) / 2)  # 2 (banker's 1.5 -> 2) and 2 (2.5 -> 2)
    np.testing.assert_array_equal(out, img[y : y + 4, x : x + 3])
    np.testing.assert_array_equal(T.CenterCrop(2).apply(img), img[2:4, 3:5])
    with pytest.raises(ValueError, match="CenterCrop"):
        T.CenterCrop((8, 3)).apply(img)


def test_random_crop_is_a_window_of_the_padded_image():
    img = _image(5, 5)
    padded = np.pad(img, ((1, 1), (1, 1), (0, 0)), constant_values=0)
    np.random.seed(3)
    out = T.RandomCrop(4, padding_size=1).apply(img)
    hits = [
        (y, x)
        for y in range(4)
        for x in range(4)
        if np.array_equal(padded[y : y + 4, x : x + 4], out)
    ]
    assert out.shape == (4, 4, 3) and hits
    # still too small after the padding: the bottom and right grow to output_size
    big = T.RandomCrop((9, 8), padding_size=1, padding_value=[1, 2, 3]).apply(img)
    assert big.shape == (9, 8, 3)
    np.testing.assert_array_equal(big[1:6, 1:6], img)
    np.testing.assert_array_equal(big[8, 7], [1, 2, 3])


def _alpha(seed, value):
    np.random.seed(seed)
    return np.float32(np.random.uniform(max(0, 1 - value), 1 + value))


def test_brightness_contrast_saturation_values():
    img = _image(4, 4)
    f = img.astype(np.float32)
    gray = f @ np.float32([0.114, 0.587, 0.299])  # BGR weights
    for cls, want in (
        (T.BrightnessTransform, lambda a: f * a),
        (T.ContrastTransform, lambda a: f * a + gray.mean() * (1 - a)),
        (T.SaturationTransform, lambda a: f * a + gray[..., None] * (1 - a)),
    ):
        a = _alpha(5, 0.4)
        np.random.seed(5)
        out = cls(0.4).apply(img)
        assert out.dtype == np.uint8
        np.testing.assert_array_equal(out, want(a).clip(0, 255).astype(np.uint8))
        assert cls(0).apply(img) is img
        with pytest.raises(ValueError, match=cls.__name__):
            cls(-1)


def test_color_jitter_composes_and_refuses_hue():
    img = _image(3, 3)
    np.random.seed(0)
    out = T.ColorJitter(brightness=0.3, saturation=0.2).apply(img)
    assert out.shape == img.shape and out.dtype == np.uint8 and not np.array_equal(out, img)
    assert T.ColorJitter().apply(img) is img
    with pytest.raises(NotImplementedError, match="hue"):
        T.ColorJitter(hue=0.1)
