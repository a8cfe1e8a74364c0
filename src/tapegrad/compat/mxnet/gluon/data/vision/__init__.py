"""`mx.gluon.data.vision`: image transforms and the data sets that read local files.

    >>> from tapegrad.compat.mxnet.gluon.data.vision import transforms
    >>> to_input = transforms.Compose([transforms.ToTensor(),
    ...                                transforms.Normalize(0.13, 0.31)])

`MNIST`, `FashionMNIST` and `CIFAR10` read the files MXNet downloads (the idx files, and
CIFAR-10's binary batches) from `root`; tapegrad downloads nothing, so a missing file
raises and names what to put there.
"""

from __future__ import annotations

from . import transforms  # noqa: F401
from .datasets import CIFAR10, MNIST, FashionMNIST  # noqa: F401

__all__ = ["transforms", "MNIST", "FashionMNIST", "CIFAR10"]
