"""The digits data set: the shipped copy is complete and equals scikit-learn's."""

import numpy as np
import pytest

import tapegrad as tg


def test_shipped_copy():
    images, labels, source = tg.data.load_digits("package")
    assert source == "package"
    assert images.shape == (1797, 8, 8) and images.dtype == np.uint8
    assert images.min() == 0 and images.max() == 16
    assert labels.shape == (1797,) and labels.dtype == np.int64
    assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_shipped_copy_equals_sklearn():
    pytest.importorskip("sklearn")
    a, la, _ = tg.data.load_digits("package")
    b, lb, src = tg.data.load_digits("sklearn")
    assert src == "sklearn"
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(la, lb)


def test_auto_falls_back_to_the_shipped_copy(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn -> ImportError
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    _, _, source = tg.data.load_digits()
    assert source == "package"
    with pytest.raises(ImportError, match=r"tapegrad\[sklearn\]"):
        tg.data.load_digits("sklearn")


def test_digits_dataset():
    ds = tg.data.digits_dataset()
    x, y = ds[0]
    assert x.shape == (1, 8, 8) and x.dtype == np.float32 and x.numpy().min() >= 0
    assert x.numpy().max() <= 1.0 and y.item() == 0
    flat = tg.data.digits_dataset(flatten=True, source="package")
    assert flat[5][0].shape == (64,)
    with pytest.raises(ValueError, match="source must be"):
        tg.data.load_digits("web")


def test_the_fallback_to_the_shipped_copy_is_a_logged_notice(monkeypatch, caplog):
    import logging
    import sys

    import tapegrad as tg

    for name in ("sklearn", "sklearn.datasets"):
        monkeypatch.setitem(sys.modules, name, None)
    with caplog.at_level(logging.INFO, logger="tapegrad"):
        images, _, source = tg.data.load_digits()
    assert source == "package" and images.shape == (1797, 8, 8)
    (record,) = [r for r in caplog.records if r.name.startswith("tapegrad")]
    assert (
        record.name == "tapegrad.data.digits"
        and "scikit-learn is not installed" in record.getMessage()
    )
