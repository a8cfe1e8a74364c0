"""MNIST, FashionMNIST and CIFAR-10 from local files (the ones MXNet downloads).

Items are `(image, label)`: an HWC uint8 NDArray and an int32 label, as MXNet's; the
`transform(image, label)` given is applied to each item.
"""

from __future__ import annotations

import gzip
import os
import struct

import numpy as np

from ..dataset import Dataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10"]


def _open(path: str):
    for candidate in (path, path + ".gz"):
        if os.path.exists(candidate):
            return (
                gzip.open(candidate, "rb") if candidate.endswith(".gz") else open(candidate, "rb")
            )
    raise FileNotFoundError(
        f"{path}(.gz) not found: tapegrad downloads nothing; put the data set's files in "
        f"{os.path.dirname(path) or '.'}"
    )


class _Local(Dataset):
    def __init__(self, root, train, transform) -> None:
        self._root = os.path.expanduser(root)
        self._train, self._transform = train, transform
        self._data, self._label = self._read()

    def _read(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._label)

    def __getitem__(self, idx):
        from .... import ndarray

        image = ndarray.array(self._data[idx], dtype=self._data.dtype)
        label = self._label[idx]
        if self._transform is not None:
            return self._transform(image, label)
        return image, label


class MNIST(_Local):
    """MNIST from the idx files in `root` (train-images-idx3-ubyte ... , gzipped or not)."""

    _FILES = {
        True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
        False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
    }

    def __init__(self, root="~/.mxnet/datasets/mnist", train=True, transform=None) -> None:
        super().__init__(root, train, transform)

    def _read(self):
        images, labels = (os.path.join(self._root, f) for f in self._FILES[self._train])
        with _open(labels) as f:
            _, n = struct.unpack(">II", f.read(8))
            label = np.frombuffer(f.read(), dtype=np.uint8).astype(np.int32)
        with _open(images) as f:
            _, n, rows, cols = struct.unpack(">IIII", f.read(16))
            data = np.frombuffer(f.read(), dtype=np.uint8).reshape(n, rows, cols, 1)
        return data, label


class FashionMNIST(MNIST):
    """Fashion-MNIST (the same idx file names as MNIST) from `root`."""

    def __init__(self, root="~/.mxnet/datasets/fashion-mnist", train=True, transform=None) -> None:
        super().__init__(root, train, transform)


class CIFAR10(_Local):
    """CIFAR-10 from its binary batches in `root` (data_batch_1.bin ... test_batch.bin)."""

    def __init__(self, root="~/.mxnet/datasets/cifar10", train=True, transform=None) -> None:
        super().__init__(root, train, transform)

    def _read(self):
        names = [f"data_batch_{i}.bin" for i in range(1, 6)] if self._train else ["test_batch.bin"]
        data, label = [], []
        for name in names:
            with _open(os.path.join(self._root, name)) as f:
                raw = np.frombuffer(f.read(), dtype=np.uint8).reshape(-1, 3073)
            label.append(raw[:, 0].astype(np.int32))
            data.append(raw[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        return np.concatenate(data), np.concatenate(label)
