"""The 8x8 handwritten digits (1,797 images, 10 classes): a real data set that always works.

Loaded through scikit-learn when it is installed, otherwise from the copy shipped in
`tapegrad/data/files/digits.npz` (same values; source and licence in files/README.md).
"""

from __future__ import annotations

import logging
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np

from .dataset import TensorDataset

if TYPE_CHECKING:  # annotations only: numpy.typing is not imported at run time
    import numpy.typing as npt

__all__ = ["load_digits", "digits_dataset"]

_N, _SIDE = 1797, 8
_log = logging.getLogger(__name__)  # under the "tapegrad" logger


def load_digits(source: str = "auto") -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64], str]:
    """The digits as NumPy arrays: images (1797, 8, 8) uint8 in 0..16, labels (1797,) int64.

    Args:
        source: "auto" (scikit-learn if installed, else the shipped copy), "sklearn" or
            "package".

    Returns (images, labels, source_used).

    >>> images, labels, _ = tg.data.load_digits()
    >>> images.shape, labels[:5]
    ((1797, 8, 8), array([0, 1, 2, 3, 4]))
    """
    if source not in ("auto", "sklearn", "package"):
        raise ValueError(
            f"load_digits: source must be 'auto', 'sklearn' or 'package', got {source!r}"
        )
    if source in ("auto", "sklearn"):
        try:
            from sklearn.datasets import load_digits as sk_load
        except ImportError:
            if source == "sklearn":
                from ..utils.hints import install_hint

                raise ImportError(
                    f"load_digits(source='sklearn') needs scikit-learn: "
                    f"{install_hint('sklearn')}; or use source='package'"
                ) from None
            _log.info(
                "load_digits: scikit-learn is not installed; using the copy shipped "
                "with tapegrad (the same values)"
            )
        else:
            d = sk_load()
            return d.images.astype(np.uint8), d.target.astype(np.int64), "sklearn"
    ref = resources.files("tapegrad.data").joinpath("files/digits.npz")
    with resources.as_file(ref) as path, np.load(path, allow_pickle=False) as f:
        images, labels = f["images"], f["target"].astype(np.int64)
    if images.shape != (_N, _SIDE, _SIDE) or labels.shape != (_N,):
        raise RuntimeError(
            f"the shipped digits file is damaged (images {images.shape}, labels {labels.shape}); "
            "reinstall tapegrad or install scikit-learn"
        )
    return images, labels, "package"


def digits_dataset(flatten: bool = False, source: str = "auto") -> TensorDataset:
    """The digits as a TensorDataset of (image, label): float32 images scaled to [0, 1],
    shaped (1, 8, 8) for a CNN or (64,) with `flatten=True`; int64 labels.

    >>> train, test = tg.data.random_split(tg.data.digits_dataset(), [0.8, 0.2], seed=0)
    """
    images, labels, _ = load_digits(source)
    x = images.astype(np.float32) / 16.0
    x = x.reshape(len(x), -1) if flatten else x[:, None, :, :]
    return TensorDataset(x, labels)
